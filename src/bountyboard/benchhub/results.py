"""What the hub answers from its pools: a benchmark's leaderboard, a model's reproduced results, and
two models compared on their shared tasks.

All read the pools (a merge of two tallies at most per entry) and never the runs; the leaderboard and
comparisons also read the tallies of the measurements they show, to name their task sets and pair
their tasks. A leaderboard entry is a (model, agent) pair headed by its dataset revision with the
most tasks, ranked only against entries of the same task set; reference agents are listed apart as
harness checks. A model's status on a benchmark is decided on its measurement with the most tasks,
calibration agents left out, among the runs of keyed submitters other than the claimant; the
claimant's own runs make it ``self_reported`` (docs/benchhub.md, "Independence"). Claims and their
claimants are read from the submitter pools.
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.benchhub import counting, decisions, pools, stats
from bountyboard.benchhub.aliases import model_key
from bountyboard.benchhub.answers import (
    Claimant,
    ClaimInfo,
    ComparedMeasurement,
    Comparison,
    Coverage,
    Decision,
    Gap,
    Leaderboard,
    LeaderboardEntry,
    RankRange,
    ReproducedAnswer,
    ReproducedItem,
    ReproducedMeasurement,
    TaskSet,
    ToleranceUsed,
)
from bountyboard.benchhub.models import Benchmark, Pool, SubmitterPool
from bountyboard.benchhub.schemas import (
    Interval,
    Metric,
)
from bountyboard.benchhub.service import get_benchmark
from bountyboard.clock import rfc3339
from bountyboard.error_codes import ErrorCode
from bountyboard.errors import Problem, invalid

TOLERANCE_RULE = ("reproduced: the 90% interval lies inside claim ± tolerance.abs (TOST at 5%); discrepant: the 95% "
                  "interval lies outside it; inconclusive otherwise")
# In the order gaps[] lists them: unchecked claims first, then inconclusive results, then blanks.
GAP_STATUSES = (decisions.Status.CLAIM_ONLY, decisions.Status.SELF_REPORTED, decisions.Status.INCONCLUSIVE,
                decisions.Status.GAP)
DEFAULT_PULL_ROWS = 200
# The benchmark page compares every pair among this many leading entries (15 pairs).
PAIRWISE_ENTRIES = 6


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
    metric = counting.metric_range(record)
    found = await pools.measurements(session, leaderboard_conditions(slug), include_anonymous=include_anonymous,
                                     metrics={slug: metric})
    pairs: dict[tuple[str, str], list[pools.Measurement]] = {}
    for measurement in found:
        pairs.setdefault((measurement.model_key, measurement.agent), []).append(measurement)
    heads = [(key, max(measured, key=_most_tasks), measured) for (key, _), measured in pairs.items()]
    tallies = await pools.task_tallies(session, [head for _, head, _ in heads])
    entries = [
        LeaderboardEntry(
            rank=None, rankRange=None, model=head.model, modelKey=key, **_measurement_fields(head, size),
            taskSet=TaskSet(id=decisions.task_set_id(head.dataset_revision, tally.trials),
                            datasetRevision=head.dataset_revision or None, tasks=len(tally)),
            datasetRevisions=sorted({m.dataset_revision or "(unnamed)" for m in measured}),
        )
        for (key, head, measured), tally in zip(heads, tallies, strict=True)
    ]
    higher = record["metric"]["higherIsBetter"]
    ranked = _rank_by_task_set([entry for entry in entries if not entry.calibration], metric, higher)
    checks = sorted((entry for entry in entries if entry.calibration), key=lambda e: _by_mean(e, higher))
    return Leaderboard(benchmark=slug, metric=Metric(**record["metric"]), size=size,
                       includeAnonymous=include_anonymous, data=ranked, harnessChecks=checks)


def _by_mean(entry: LeaderboardEntry, higher: bool) -> tuple[Any, ...]:
    # Unscored pairs (no trial at all) go last whichever way the metric points.
    return entry.mean is None, -(entry.mean or 0.0) if higher else (entry.mean or 0.0), entry.modelKey, entry.agent


def _rank_by_task_set(entries: list[LeaderboardEntry], metric: stats.MetricRange,
                      higher: bool) -> list[LeaderboardEntry]:
    """Rank entries only against those measured on the same tasks, by their 95% intervals; task sets
    with the most entries first."""
    by_set: dict[str, list[LeaderboardEntry]] = {}
    for entry in entries:
        by_set.setdefault(entry.taskSet.id, []).append(entry)
    for group in by_set.values():
        intervals = [(e.ci95.low, e.ci95.high) if e.ci95 else (metric.low, metric.high) for e in group]
        for entry, (best, worst) in zip(group, decisions.significance_ranks(intervals, higher_is_better=higher),
                                        strict=True):
            entry.rank, entry.rankRange = best, RankRange(best=best, worst=worst)
    groups = sorted(by_set.values(), key=lambda group: (-len(group), -group[0].taskSet.tasks, group[0].taskSet.id))
    return [entry for group in groups for entry in sorted(group, key=lambda e: (e.rank, *_by_mean(e, higher)))]


@dataclass(frozen=True)
class Claim:
    """A claimed score, who claimed it, and the model name it was claimed for."""

    info: ClaimInfo
    claimant: Claimant
    model: str


def registry_claims(record: dict[str, Any]) -> dict[str, Claim]:
    """model key -> the registry's latest reference score for it."""
    latest: dict[str, Claim] = {}
    for ref in sorted(record["referenceScores"], key=lambda ref: ref["date"]):
        latest[model_key(ref["model"])] = Claim(
            ClaimInfo(value=ref["value"], sourceUrl=ref["sourceUrl"], date=ref["date"], stderr=ref.get("stderr"),
                      origin="registry"), Claimant(kind="registry", id=None), ref["model"])
    return latest


def upload_claim(rows: Sequence[SubmitterPool]) -> Claim | None:
    """The latest claim carried by a keyed upload; failing that, by an anonymous one (an anonymous
    upload never displaces a keyed claim). Calibration runs claim nothing."""
    claimed = [row for row in rows if row.claim_value is not None and row.claim_at is not None
               and not pools.is_calibration(row.agent_name)]
    if not claimed:
        return None
    row = max(claimed, key=lambda row: (not row.anonymous, row.claim_at))
    return Claim(ClaimInfo(value=row.claim_value, sourceUrl=row.claim_source_url or "",
                           date=(rfc3339(row.claim_at) or "")[:10], stderr=None, origin="run"),
                 Claimant(kind="anonymous" if row.anonymous else "user", id=row.submitter_id), row.model)


async def benchmark_claims(session: AsyncSession, record: dict[str, Any], *,
                           include_anonymous: bool = True) -> dict[str, Claim]:
    """model key -> the claim for that model on this benchmark, as the model's reproduced results
    take it: the registry's reference score, else the claim an upload carried."""
    rows = await pools.pool_rows(session, SubmitterPool, [SubmitterPool.benchmark_slug == record["slug"]],
                                 include_anonymous=include_anonymous)
    by_model: dict[str, list[SubmitterPool]] = {}
    for row in rows:
        by_model.setdefault(row.model_key, []).append(row)
    claims = {key: claim for key, found in by_model.items() if (claim := upload_claim(found)) is not None}
    claims.update(registry_claims(record))
    return claims


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
    # Submitter pools change in the transactions that change pools, so the pools validate both.
    return [Pool.model_key == model_key(model)]


def _parties(rows: Sequence[SubmitterPool], claim: Claim | None) -> list[tuple[decisions.Basis, list[SubmitterPool]]]:
    """The model's runs on one benchmark split by whose they are, in the order a status is decided on."""
    claimant = claim.claimant.id if claim else None
    return [(decisions.Basis.INDEPENDENT, [row for row in rows if not row.anonymous and row.submitter_id != claimant]),
            (decisions.Basis.CLAIMANT, [row for row in rows if row.submitter_id == claimant]),
            (decisions.Basis.ANONYMOUS, [row for row in rows if row.anonymous and row.submitter_id != claimant])]


_BASES = list(decisions.Basis)


def _item(benchmark: Benchmark, claim: Claim | None,
          measured: list[tuple[decisions.Basis, pools.Measurement]]) -> ReproducedItem:
    record = benchmark.record
    size = record.get("size")
    ranked = sorted(measured, key=lambda pair: _most_tasks(pair[1]), reverse=True)
    ranked.sort(key=lambda pair: _BASES.index(pair[0]))  # stable: most tasks first within each basis
    head = ranked[0] if ranked else None
    tolerance = float(record["tolerance"]["abs"])
    verdict = decisions.verdict(has_runs=head is not None, measured=head[1].estimate if head else None,
                            claim=claim.info.value if claim else None, tolerance=tolerance,
                            reproducible=benchmark.reproducible,
                            basis=head[0] if head else decisions.Basis.INDEPENDENT)
    decision = Decision(band=Interval(low=verdict.band[0], high=verdict.band[1]),
                        confidence=stats.DIFFERENCE_CONFIDENCE,
                        extraTasksToDecide=verdict.extra_tasks) if verdict.band else None
    shown = [ReproducedMeasurement(**_measurement_fields(m, size), basis=basis.value) for basis, m in ranked]
    return ReproducedItem(
        benchmark=benchmark.slug, name=benchmark.name, kind=benchmark.kind, status=verdict.status.value,
        reason=verdict.reason, claim=claim.info if claim else None, claimant=claim.claimant if claim else None,
        independent=claim is not None and head is not None and head[0] is decisions.Basis.INDEPENDENT,
        measured=shown[0] if shown else None, otherMeasurements=shown[1:],
        runs=sum(m.runs for _, m in ranked), submitters=len({s for _, m in ranked for s in m.submitters}),
        delta=verdict.delta, decision=decision, tolerance=ToleranceUsed(abs=tolerance, rule=TOLERANCE_RULE),
    )


async def reproduced(session: AsyncSession, model: str, *, include_anonymous: bool = True) -> ReproducedAnswer:
    """For every benchmark: what is claimed for ``model``, what was measured, and whether they agree."""
    key = model_key(model)
    benchmarks = list((await session.execute(select(Benchmark).order_by(Benchmark.slug))).scalars())
    ranges = {benchmark.slug: counting.metric_range(benchmark.record) for benchmark in benchmarks}
    rows = await pools.pool_rows(session, SubmitterPool, [SubmitterPool.model_key == key],
                                 include_anonymous=include_anonymous)
    by_benchmark: dict[str, list[SubmitterPool]] = {}
    for row in rows:
        if not pools.is_calibration(row.agent_name):
            by_benchmark.setdefault(row.benchmark_slug, []).append(row)
    claims: dict[str, Claim | None] = {}
    groups: list[list[SubmitterPool]] = []
    bases: list[decisions.Basis] = []
    for benchmark in benchmarks:
        found = by_benchmark.get(benchmark.slug, [])
        claim = claims[benchmark.slug] = registry_claims(benchmark.record).get(key) or upload_claim(found)
        for basis, party in _parties(found, claim):
            for group in pools.by_pool_key(party):
                groups.append(group)
                bases.append(basis)
    measured: dict[str, list[tuple[decisions.Basis, pools.Measurement]]] = {}
    for basis, measurement in zip(bases, await pools.measure(session, SubmitterPool, groups, ranges), strict=True):
        measured.setdefault(measurement.benchmark, []).append((basis, measurement))
    items = [_item(benchmark, claims[benchmark.slug], measured.get(benchmark.slug, [])) for benchmark in benchmarks]
    gaps = [Gap(benchmark=item.benchmark, status=item.status, reason=item.reason,
                command=gap_command(benchmark.record, model))
            for item, benchmark in zip(items, benchmarks, strict=True)
            if decisions.Status(item.status) in GAP_STATUSES and benchmark.reproducible]
    gaps.sort(key=lambda gap: GAP_STATUSES.index(decisions.Status(gap.status)))
    summary: dict[str, int] = {status.value: 0 for status in decisions.Status}
    for item in items:
        summary[item.status] += 1
    return ReproducedAnswer(model=model, modelKey=key, includeAnonymous=include_anonymous,
                            toleranceRule=TOLERANCE_RULE, summary=summary, data=items, gaps=gaps)


def compare_conditions(slug: str, *models: str) -> list[ColumnElement[bool]]:
    return [Pool.benchmark_slug == slug, Pool.model_key.in_({model_key(model) for model in models})]


def _side(found: Sequence[pools.Measurement], model: str, agent: str | None, slug: str) -> list[pools.Measurement]:
    """A model's measurements to compare: with the named agent, else with its agent of the most tasks
    (calibration agents only when named), one per dataset revision."""
    key = model_key(model)
    mine = [m for m in found if m.model_key == key and (m.agent == agent if agent else not m.calibration)]
    if not mine:
        with_agent = f" with agent {agent!r}" if agent else ""
        raise Problem(404, ErrorCode.NOT_FOUND, f"No run of model {model!r}{with_agent} on benchmark {slug!r}.")
    head_agent = max(mine, key=_most_tasks).agent
    return [m for m in mine if m.agent == head_agent]


def _compared(measurement: pools.Measurement) -> ComparedMeasurement:
    return ComparedMeasurement(model=measurement.model, modelKey=measurement.model_key, agent=measurement.agent,
                               datasetRevision=measurement.dataset_revision or None,
                               nTasks=measurement.estimate.n_tasks)


async def compare(session: AsyncSession, slug: str, a: str, b: str, *, agent_a: str | None = None,
                  agent_b: str | None = None, include_anonymous: bool = True) -> Comparison:
    """``a`` against ``b`` on the tasks both ran, on the dataset revision where they share the most."""
    benchmark = await get_benchmark(session, slug)
    metric = counting.metric_range(benchmark.record)
    found = await pools.measurements(session, compare_conditions(slug, a, b), include_anonymous=include_anonymous,
                                     metrics={slug: metric})
    side_a, side_b = _side(found, a, agent_a, slug), _side(found, b, agent_b, slug)
    if side_a == side_b:
        raise invalid("a and b name the same measurement: compare two models, or one model with two agents.")
    tallies = dict(zip((id(m) for m in (*side_a, *side_b)),
                       await pools.task_tallies(session, [*side_a, *side_b]), strict=True))
    candidates = [(len(tallies[id(x)].trials.keys() & tallies[id(y)].trials.keys()), x, y)
                  for x in side_a for y in side_b if x.dataset_revision == y.dataset_revision]
    shared, x, y = max(candidates, key=lambda c: c[0], default=(0, side_a[0], side_b[0]))
    result = decisions.compare_paired(tallies[id(x)], tallies[id(y)], metric) if shared else None
    if result is None:
        raise invalid(f"{a!r} and {b!r} share {shared} task(s) on {slug!r} (on any one dataset revision): a paired "
                      f"comparison needs at least {stats.MIN_TASKS_FOR_ERROR}.", code=ErrorCode.NO_SHARED_TASKS)
    return _comparison(slug, x, y, result)


def _comparison(slug: str, a: pools.Measurement, b: pools.Measurement,
                result: decisions.PairedComparison) -> Comparison:
    return Comparison(benchmark=slug, a=_compared(a), b=_compared(b), sharedTasks=result.shared_tasks,
                      meanA=result.mean_a, meanB=result.mean_b, difference=result.difference, se=result.stderr,
                      interval=Interval(low=result.interval[0], high=result.interval[1]), pValue=result.p_value,
                      method=result.method.value)


async def pairwise(session: AsyncSession, board: Leaderboard) -> list[Comparison]:
    """Every pair among the first :data:`PAIRWISE_ENTRIES` entries of the board's leading task set (the
    benchmark page's table): the same paired comparison as :func:`compare`."""
    leading = [entry for entry in board.data if board.data and entry.taskSet.id == board.data[0].taskSet.id]
    entries = leading[:PAIRWISE_ENTRIES]
    if len(entries) < 2:
        return []
    slug, metric = board.benchmark, stats.MetricRange(board.metric.min, board.metric.max)
    found = await pools.measurements(session, compare_conditions(slug, *(entry.modelKey for entry in entries)),
                                     include_anonymous=board.includeAnonymous, metrics={slug: metric})
    by_key = {(m.model_key, m.agent, m.dataset_revision): m for m in found}
    # A retraction between the two reads may have emptied a pool: that entry is left out.
    heads = [head for entry in entries
             if (head := by_key.get((entry.modelKey, entry.agent, entry.taskSet.datasetRevision or ""))) is not None]
    tallies = await pools.task_tallies(session, heads)
    comparisons = []
    for i, j in itertools.combinations(range(len(heads)), 2):
        result = decisions.compare_paired(tallies[i], tallies[j], metric)
        if result is not None:
            comparisons.append(_comparison(slug, heads[i], heads[j], result))
    return comparisons
