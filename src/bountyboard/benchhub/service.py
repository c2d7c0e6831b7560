"""Decisions of the benchmark hub: the registry in the database, run uploads and retractions.

Uploads are counted with Harbor's rule (:mod:`bountyboard.benchhub.stats`) and join their pool in the
same transaction; leaderboards and reproduced results are read from the pools (:mod:`.results`).

Plain async functions over an ``AsyncSession``, callable without HTTP (the site renders from them).
The shipped registry is brought into the database when a process starts (:func:`seed_registry`, from the
app's lifespan and the worker) and by the writes that need it (:func:`ensure_registry`); reads never write.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic_core import to_json
from sqlalchemy import Select, func, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from bountyboard.accounts.models import User
from bountyboard.benchhub import counting, pools, registry, search, stats
from bountyboard.benchhub.aliases import model_key
from bountyboard.benchhub.models import Benchmark, Run
from bountyboard.benchhub.schemas import (
    ClaimOut,
    DatasetRef,
    Interval,
    NameVersion,
    Retraction,
    RunDetail,
    RunOut,
    RunSource,
    RunUpload,
    Submitter,
    TrialUpload,
    Usage,
)
from bountyboard.clock import now, rfc3339
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, conflict, invalid, not_found
from bountyboard.ids import new_id
from bountyboard.pagination import PageParams
from bountyboard.storage.engine import get_database

# Databases (by URL) whose registry this process has already brought up to date.
_seeded: set[str] = set()


# Registry ------------------------------------------------------------------------------------------


def _columns(record: dict[str, Any]) -> dict[str, Any]:
    return {"name": record["name"], "kind": record["harbor"]["adapter"]["kind"],
            "reproducible": record["reproducible"], "record": record, "search_text": search.searchable_text(record)}


async def ensure_registry(session: AsyncSession) -> None:
    """Insert shipped records that are missing and update those whose shipped version changed.

    Safe when several processes start at once (inserts ignore a slug another process just wrote).
    """
    engine = session.get_bind().engine
    url = str(engine.url)
    if url in _seeded:
        return
    stored = dict((await session.execute(select(Benchmark.slug, Benchmark.registry_sha256))).all())
    current = now()
    insert = postgresql_insert if engine.dialect.name == "postgresql" else sqlite_insert
    for record in registry.shipped_records():
        sha = registry.record_sha256(record)
        slug = record["slug"]
        if slug not in stored:
            await session.execute(
                insert(Benchmark).values(slug=slug, registry_sha256=sha, created_at=current, updated_at=current,
                                         **_columns(record)).on_conflict_do_nothing(index_elements=["slug"])
            )
        elif stored[slug] != sha:
            await session.execute(update(Benchmark).where(Benchmark.slug == slug)
                                  .values(registry_sha256=sha, updated_at=current, **_columns(record)))
    await session.commit()
    _seeded.add(url)


async def seed_registry() -> None:
    """Periodic job: bring the shipped registry into the database at start (later ticks are no-ops)."""
    async with get_database().sessionmaker() as session:
        await ensure_registry(session)


async def get_benchmark(session: AsyncSession, slug: str) -> Benchmark:
    benchmark = await session.get(Benchmark, slug)
    if benchmark is None:
        raise not_found("benchmark", slug)
    return benchmark


async def search_benchmarks(session: AsyncSession, q: str | None, kind: str | None, tag: str | None,
                            params: PageParams) -> tuple[list[dict[str, Any]], int]:
    """Records that answer every word of ``q`` by whole words or word starts, best first
    (:mod:`bountyboard.benchhub.search`); without ``q``, all of them by slug."""
    query = select(Benchmark.record)
    for word in search.words(q or ""):  # words are letters and digits: nothing to escape for LIKE
        query = query.where(Benchmark.search_text.like(f"%{word}%"))  # narrows; the rank decides
    if kind:
        query = query.where(Benchmark.kind == kind)
    records = list((await session.execute(query.order_by(Benchmark.slug))).scalars())
    if tag:
        records = [record for record in records if tag in record["tags"]]
    ranked = search.rank_records(records, q or "")
    return ranked[params.offset:params.offset + params.pageSize], len(ranked)


async def all_records(session: AsyncSession) -> tuple[list[dict[str, Any]], datetime]:
    """Every record (by slug) and the time of the latest change, for the static index."""
    rows = list((await session.execute(select(Benchmark).order_by(Benchmark.slug))).scalars())
    latest = max((row.updated_at for row in rows), default=now())
    return [row.record for row in rows], latest


async def upsert_benchmark(session: AsyncSession, slug: str, record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Add or replace a record (admin). Returns the record and whether it was created."""
    if record.get("slug") != slug:
        raise invalid("The record's slug must match the path.", [{"field": "slug", "message": f"expected {slug!r}"}])
    errors = registry.record_errors(record)
    if errors:
        raise invalid("The benchmark record does not follow the registry schema.", errors,
                      code=ErrorCode.INVALID_BENCHMARK)
    await ensure_registry(session)
    current = now()
    existing = await session.get(Benchmark, slug)
    if existing is None:
        session.add(Benchmark(slug=slug, registry_sha256=None, created_at=current, updated_at=current,
                              **_columns(record)))
    else:
        for name, value in _columns(record).items():
            setattr(existing, name, value)
        existing.updated_at = current
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise conflict(ErrorCode.BENCHMARK_CONFLICT,
                       f"The benchmark {slug!r} was written at the same time; retry.") from exc
    return record, existing is None


# Runs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Uploader:
    """Who uploads: an account (``user_id``) or an anonymous address."""

    user_id: str | None
    bot_id: str | None
    ip: str
    display_name: str | None = None

    @property
    def submitter_id(self) -> str:
        if self.user_id:
            return self.user_id
        digest = hmac.new(get_settings().effective_secret_key.encode(), self.ip.encode(), hashlib.sha256)
        return "anon_" + digest.hexdigest()[:16]


def _ci95(run: Run, metric: stats.MetricRange) -> Interval | None:
    interval = stats.Estimate.of_score(run.score, run.stderr, run.n_tasks, run.n_trials, metric, run.binary).ci95
    return Interval(low=interval[0], high=interval[1]) if interval else None


def run_out(run: Run, display_name: str | None = None, metric: stats.MetricRange = stats.MetricRange()) -> RunOut:
    """The wire shape of a stored run; ``metric`` is its benchmark's range."""
    return RunOut(
        id=run.id, benchmark=run.benchmark_slug, model=run.model, modelKey=run.model_key,
        agent=NameVersion(name=run.agent_name, version=run.agent_version),
        harness=NameVersion(name=run.harness_name, version=run.harness_version),
        dataset=DatasetRef(ref=run.dataset_ref, revision=run.dataset_revision, seed=run.dataset_seed,
                           rowIds=run.dataset_row_ids),
        calibration=pools.is_calibration(run.agent_name), primaryMetric=run.primary_metric, metrics=run.metrics,
        passAtK=run.pass_at_k, score=run.score, stderr=run.stderr, ci95=_ci95(run, metric), nTasks=run.n_tasks,
        nTrials=run.n_rewarded, nTrialsTotal=run.n_trials, nErrors=run.n_errors,
        claim=ClaimOut(value=run.claim_value, sourceUrl=run.claim_source_url or "")
        if run.claim_value is not None else None,
        source=RunSource(**(run.source or {"format": "harbor"})), bundleSha256=run.bundle_sha256,
        submitter=Submitter(id=run.submitter_id, kind="user" if run.user_id else "anonymous",
                            displayName=display_name),
        createdAt=rfc3339(run.created_at) or "", retracted=run.retracted_at is not None,
        retraction=Retraction(reason=run.retraction_reason or "", retractedAt=rfc3339(run.retracted_at) or "")
        if run.retracted_at is not None else None,
    )


def usage(trials: list[dict[str, Any]]) -> Usage:
    """Token and cost totals over the trials that carry them."""
    tokens = [trial["tokens"] for trial in trials if trial.get("tokens")]
    costs = [trial["costUsd"] for trial in trials if trial.get("costUsd") is not None]
    return Usage(inputTokens=sum(t["input"] for t in tokens) if tokens else None,
                 outputTokens=sum(t["output"] for t in tokens) if tokens else None,
                 costUsd=math.fsum(costs) if costs else None)


def run_detail(run: Run, display_name: str | None = None, metric: stats.MetricRange = stats.MetricRange()) -> RunDetail:
    trials = json.loads(run.trials)
    return RunDetail(**run_out(run, display_name, metric).model_dump(), trials=trials, usage=usage(trials))


async def _metric_ranges(session: AsyncSession) -> dict[str, stats.MetricRange]:
    records = (await session.execute(select(Benchmark.slug, Benchmark.record))).all()
    return {slug: counting.metric_range(record) for slug, record in records}


def _with_names(query: Select[Any]) -> Select[Any]:
    return query.outerjoin(User, User.id == Run.user_id).add_columns(User.display_name)


# A run as lists show it: without its trials and per-task tallies (the bulk of the row).
_SUMMARY = (defer(Run.trials), defer(Run.task_tally))


async def _find_by_bundle(session: AsyncSession, bundle_sha256: str) -> tuple[Run, str | None] | None:
    query = select(Run).options(*_SUMMARY).where(Run.bundle_sha256 == bundle_sha256)
    row = (await session.execute(_with_names(query))).first()
    return (row[0], row[1]) if row else None


def _storable(trials: list[TrialUpload]) -> str:
    """The trials as stored: the dicts as sent, serialised in one pass by pydantic_core (times as
    RFC 3339 text)."""
    return to_json(trials).decode()


async def upload_run(session: AsyncSession, upload: RunUpload, uploader: Uploader) -> tuple[RunOut, bool]:
    """Store a run and fold it into its pool, or answer the stored one when its bundle was uploaded
    before (``duplicate``)."""
    existing = await _find_by_bundle(session, upload.bundleSha256)
    if existing is not None:
        return run_out(*existing, metric=(await _metric_ranges(session))[existing[0].benchmark_slug]), True
    await ensure_registry(session)
    benchmark = await session.get(Benchmark, upload.benchmark)
    if benchmark is None:
        raise invalid(f"No benchmark {upload.benchmark!r} in the registry; search with GET /v1/bench/benchmarks.",
                      [{"field": "benchmark", "message": "unknown benchmark slug"}], code=ErrorCode.UNKNOWN_BENCHMARK)
    count = counting.count_upload(upload, benchmark.record)
    run = Run(
        id=new_id("run"), benchmark_slug=benchmark.slug, model=upload.model, model_key=model_key(upload.model),
        agent_name=upload.agent.name, agent_version=upload.agent.version, harness_name=upload.harness.name,
        harness_version=upload.harness.version, dataset_ref=upload.dataset.ref,
        dataset_revision=upload.dataset.revision, dataset_seed=upload.dataset.seed,
        dataset_row_ids=upload.dataset.rowIds,
        source=upload.source.model_dump() if upload.source else None,
        trials=_storable(upload.trials),
        claim_value=upload.claim.value if upload.claim else None,
        claim_source_url=upload.claim.sourceUrl if upload.claim else None,
        bundle_sha256=upload.bundleSha256, submitter_kind="user" if uploader.user_id else "anonymous",
        submitter_id=uploader.submitter_id, user_id=uploader.user_id, bot_id=uploader.bot_id, created_at=now(),
    )
    counting.store_count(run, count)
    metric = counting.metric_range(benchmark.record)
    try:
        session.add(run)
        await session.flush()
        await pools.join(session, run)
        await session.flush()
    except IntegrityError:
        # The same bundle was stored by a concurrent upload: answer that one.
        await session.rollback()
        raced = await _find_by_bundle(session, upload.bundleSha256)
        if raced is None:
            raise
        return run_out(*raced, metric=metric), True
    return run_out(run, uploader.display_name, metric), False


async def get_run(session: AsyncSession, run_id: str) -> RunDetail:
    row = (await session.execute(_with_names(select(Run).where(Run.id == run_id)))).first()
    if row is None:
        raise not_found("run", run_id)
    return run_detail(row[0], row[1], (await _metric_ranges(session))[row[0].benchmark_slug])


async def run_and_record(session: AsyncSession, run_id: str) -> tuple[Run, dict[str, Any]]:
    """A stored run and its benchmark's record (exports)."""
    run = await session.get(Run, run_id)
    if run is None:
        raise not_found("run", run_id)
    benchmark = await session.get(Benchmark, run.benchmark_slug)
    assert benchmark is not None
    return run, benchmark.record


async def list_runs(session: AsyncSession, params: PageParams, *, benchmark: str | None = None,
                    model: str | None = None, submitter: str | None = None,
                    retracted: bool | None = None) -> tuple[list[RunOut], int]:
    conditions = []
    if benchmark:
        conditions.append(Run.benchmark_slug == benchmark)
    if model:
        conditions.append(Run.model_key == model_key(model))
    if submitter:
        conditions.append(Run.submitter_id == submitter)
    if retracted is not None:
        conditions.append(Run.retracted_at.is_not(None) if retracted else Run.retracted_at.is_(None))
    total = int((await session.execute(select(func.count()).select_from(Run).where(*conditions))).scalar_one())
    rows = (await session.execute(
        _with_names(select(Run).options(*_SUMMARY).where(*conditions)).order_by(Run.created_at.desc(), Run.id.desc())
        .offset(params.offset).limit(params.pageSize)
    )).all()
    ranges = await _metric_ranges(session)
    return [run_out(row[0], row[1], ranges[row[0].benchmark_slug]) for row in rows], total


async def retract_run(session: AsyncSession, run_id: str, reason: str, admin_id: str) -> RunOut:
    run = await session.get(Run, run_id)
    if run is None:
        raise not_found("run", run_id)
    if run.retracted_at is not None:
        raise conflict(ErrorCode.ALREADY_RETRACTED, f"The run {run_id} was retracted already: {run.retraction_reason}")
    run.retracted_at = now()
    run.retraction_reason = reason
    run.retracted_by = admin_id
    await session.flush()
    await pools.rebuild(session, run)
    await session.flush()
    return await get_run(session, run_id)
