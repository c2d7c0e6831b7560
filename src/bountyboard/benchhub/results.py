"""What the hub answers from its pools: a benchmark's leaderboard and a model's reproduced results.

Both read the pools (O(pools), a merge of two tallies at most per entry) and never the runs. A
leaderboard entry is a (model, agent) pair headed by its dataset revision with the most tasks;
reference agents are listed apart as harness checks. A model's status on a benchmark is decided on
its measurement with the most tasks, calibration agents left out (docs/benchhub.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.benchhub import pools, stats
from bountyboard.benchhub.aliases import model_key
from bountyboard.benchhub.models import Benchmark, Pool
from bountyboard.benchhub.schemas import (
    ClaimInfo,
    Coverage,
    Decision,
    Gap,
    Interval,
    Leaderboard,
    LeaderboardEntry,
    Measurement,
    Metric,
    ReproducedAnswer,
    ReproducedItem,
    ToleranceUsed,
)
from bountyboard.benchhub.service import ensure_registry, get_benchmark
from bountyboard.clock import rfc3339

TOLERANCE_RULE = ("reproduced: the 90% interval lies inside claim ± tolerance.abs (TOST at 5%); discrepant: the 95% "
                  "interval lies outside it; inconclusive otherwise")
# In the order gaps[] lists them: unchecked claims first, then inconclusive results, then blanks.
GAP_STATUSES = (stats.Status.CLAIM_ONLY, stats.Status.INCONCLUSIVE, stats.Status.GAP)
DEFAULT_PULL_ROWS = 200


def _interval(low_high: tuple[float, float] | None) -> Interval | None:
    return Interval(low=low_high[0], high=low_high[1]) if low_high else None


def _measurement_fields(measurement: pools.Measurement, size: int | None) -> dict[str, Any]:
    estimate = measurement.estimate
    tasks = estimate.n_tasks
    return {
        "agent": measurement.agent, "calibration": measurement.calibration,
        "datasetRevision": measurement.dataset_revision or None, "datasetRefs": sorted(measurement.dataset_refs),
        "primaryMetric": measurement.primary_metric, "mean": estimate.mean, "stderr": estimate.stderr,
        "ci95": _interval(estimate.ci95), "ci90": _interval(estimate.interval(stats.EQUIVALENCE_CONFIDENCE)),
        "effectiveTasks": estimate.effective_size(), "metrics": measurement.metrics,
        "coverage": Coverage(tasks=tasks, size=size, fraction=tasks / size if size else None),
        "nTasks": tasks, "nTrials": measurement.n_trials, "nErrors": measurement.n_errors, "runs": measurement.runs,
        "anonymousRuns": measurement.anonymous_runs, "submitters": len(measurement.submitters),
        "lastRunAt": rfc3339(measurement.last_run_at) or "",
    }


def _most_tasks(measurement: pools.Measurement) -> tuple[int, str]:
    return measurement.estimate.n_tasks, rfc3339(measurement.last_run_at) or ""


def leaderboard_conditions(slug: str) -> list[ColumnElement[bool]]:
    return [Pool.benchmark_slug == slug]


async def leaderboard(session: AsyncSession, slug: str, *, include_anonymous: bool = True) -> Leaderboard:
    benchmark = await get_benchmark(session, slug)
    record = benchmark.record
    size = record.get("size")
    found = await pools.measurements(session, leaderboard_conditions(slug), include_anonymous=include_anonymous,
                                     metrics={slug: pools.metric_range(record)})
    pairs: dict[tuple[str, str], list[pools.Measurement]] = {}
    for measurement in found:
        pairs.setdefault((measurement.model_key, measurement.agent), []).append(measurement)
    entries: list[LeaderboardEntry] = []
    for (key, _), measured in pairs.items():
        head = max(measured, key=_most_tasks)
        entries.append(LeaderboardEntry(
            rank=None, model=head.model, modelKey=key, **_measurement_fields(head, size),
            datasetRevisions=sorted({m.dataset_revision or "(unnamed)" for m in measured}),
        ))
    higher = record["metric"]["higherIsBetter"]
    # Unscored pairs (no trial at all) go last whichever way the metric points.
    entries.sort(key=lambda e: (e.mean is None, -(e.mean or 0.0) if higher else (e.mean or 0.0), e.modelKey, e.agent))
    ranked = [entry for entry in entries if not entry.calibration]
    for rank, entry in enumerate(ranked, start=1):
        entry.rank = rank
    return Leaderboard(benchmark=slug, metric=Metric(**record["metric"]), size=size,
                       includeAnonymous=include_anonymous, data=ranked,
                       harnessChecks=[entry for entry in entries if entry.calibration])


def _registry_claim(record: dict[str, Any], key: str) -> ClaimInfo | None:
    matching = [ref for ref in record["referenceScores"] if model_key(ref["model"]) == key]
    if not matching:
        return None
    latest = max(matching, key=lambda ref: ref["date"])
    return ClaimInfo(value=latest["value"], sourceUrl=latest["sourceUrl"], date=latest["date"],
                     stderr=latest.get("stderr"), origin="registry")


def _run_claim(measured: Sequence[pools.Measurement]) -> ClaimInfo | None:
    claims = [m.claim for m in measured if m.claim is not None]
    if not claims:
        return None
    value, source, at = max(claims, key=lambda claim: claim[2])
    return ClaimInfo(value=value, sourceUrl=source, date=(rfc3339(at) or "")[:10], stderr=None, origin="run")


def gap_command(record: dict[str, Any], model: str) -> str:
    """The bench commands that produce and upload a run of ``model`` on this benchmark."""
    slug = record["slug"]
    adapter = record["harbor"]["adapter"]
    quoted = shlex.quote(model)
    if adapter["kind"] == "hf_rows":
        run = (f"bountyboard bench pull {slug} --n {DEFAULT_PULL_ROWS} && "
               f"bountyboard bench run ./{slug} -a <agent> -m {quoted}")
    else:
        run = f"bountyboard bench run {adapter['ref']} --benchmark {slug} -a <agent> -m {quoted}"
    return f"{run} && bountyboard bench push ./jobs"


def reproduced_conditions(model: str) -> list[ColumnElement[bool]]:
    return [Pool.model_key == model_key(model)]


def _item(benchmark: Benchmark, measured: list[pools.Measurement], key: str) -> ReproducedItem:
    record = benchmark.record
    size = record.get("size")
    ranked = sorted((m for m in measured if not m.calibration), key=_most_tasks, reverse=True)
    head = ranked[0] if ranked else None
    claim = _registry_claim(record, key) or _run_claim(ranked)
    tolerance = float(record["tolerance"]["abs"])
    verdict = stats.verdict(has_runs=head is not None, measured=head.estimate if head else None,
                            claim=claim.value if claim else None, tolerance=tolerance,
                            reproducible=benchmark.reproducible)
    decision = Decision(band=Interval(low=verdict.band[0], high=verdict.band[1]),
                        confidence=stats.DIFFERENCE_CONFIDENCE,
                        extraTasksToDecide=verdict.extra_tasks) if verdict.band else None
    return ReproducedItem(
        benchmark=benchmark.slug, name=benchmark.name, kind=benchmark.kind, status=verdict.status.value,
        reason=verdict.reason, claim=claim,
        measured=Measurement(**_measurement_fields(head, size)) if head else None,
        otherMeasurements=[Measurement(**_measurement_fields(m, size)) for m in ranked[1:]],
        runs=sum(m.runs for m in ranked), submitters=len({s for m in ranked for s in m.submitters}),
        delta=verdict.delta, decision=decision, tolerance=ToleranceUsed(abs=tolerance, rule=TOLERANCE_RULE),
    )


async def reproduced(session: AsyncSession, model: str, *, include_anonymous: bool = True) -> ReproducedAnswer:
    """For every benchmark: what is claimed for ``model``, what was measured, and whether they agree."""
    await ensure_registry(session)
    key = model_key(model)
    benchmarks = list((await session.execute(select(Benchmark).order_by(Benchmark.slug))).scalars())
    ranges = {benchmark.slug: pools.metric_range(benchmark.record) for benchmark in benchmarks}
    found = await pools.measurements(session, reproduced_conditions(model), include_anonymous=include_anonymous,
                                     metrics=ranges)
    by_benchmark: dict[str, list[pools.Measurement]] = {}
    for measurement in found:
        by_benchmark.setdefault(measurement.benchmark, []).append(measurement)
    items = [_item(benchmark, by_benchmark.get(benchmark.slug, []), key) for benchmark in benchmarks]
    gaps = [Gap(benchmark=item.benchmark, status=item.status, reason=item.reason,
                command=gap_command(benchmark.record, model))
            for item, benchmark in zip(items, benchmarks, strict=True)
            if stats.Status(item.status) in GAP_STATUSES and benchmark.reproducible]
    gaps.sort(key=lambda gap: GAP_STATUSES.index(stats.Status(gap.status)))
    summary: dict[str, int] = {status.value: 0 for status in stats.Status}
    for item in items:
        summary[item.status] += 1
    return ReproducedAnswer(model=model, modelKey=key, includeAnonymous=include_anonymous,
                            toleranceRule=TOLERANCE_RULE, summary=summary, data=items, gaps=gaps)
