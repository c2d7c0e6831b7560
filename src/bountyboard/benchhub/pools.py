"""Pools: the runs of one (benchmark, model, agent, dataset revision, primary metric), tallied by task.

A run joins its pool in the transaction that stores it; a retraction rebuilds the pool from its
remaining runs. Anonymous and named runs keep separate pools, so leaving anonymous runs out is a
filter, and leaving them in merges two tallies (O(tasks)). Pooling never mixes agents, dataset
revisions or primary metrics. Reads use the stored moments and never visit runs.

Every run also joins its submitter's pool (:class:`SubmitterPool`, the same key cut by submitter):
a claim is judged on the runs of everyone but the claimant, which are merged from those.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeVar, cast

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, defer, load_only

from bountyboard import __version__
from bountyboard.benchhub import counting, stats
from bountyboard.benchhub.models import AnyPool, Benchmark, Pool, Run, SubmitterPool

# Reference agents: `oracle` applies the reference solution, `nop` does nothing. Their runs check
# the harness and the verifier (expected near max and min), they do not measure a model.
CALIBRATION_AGENTS = frozenset({"oracle", "nop"})
PoolT = TypeVar("PoolT", Pool, SubmitterPool)


def is_calibration(agent_name: str) -> bool:
    return agent_name.lower() in CALIBRATION_AGENTS


class PoolKey(NamedTuple):
    """What may be pooled: runs of one benchmark, model, agent, dataset revision and primary metric.

    The one place this key is spelled: a run's pools are found by it (with who submitted, see
    :func:`_columns`), and pool rows are grouped by it when a named and an anonymous pool (or
    submitters' pools) are merged for a read."""

    benchmark_slug: str
    model_key: str
    agent_name: str
    dataset_revision: str
    primary_metric: str

    @classmethod
    def of_run(cls, run: Run) -> PoolKey:
        return cls(run.benchmark_slug, run.model_key, run.agent_name, run.dataset_revision or "", run.primary_metric)

    @classmethod
    def of_pool(cls, pool: AnyPool) -> PoolKey:
        return cls(pool.benchmark_slug, pool.model_key, pool.agent_name, pool.dataset_revision, pool.primary_metric)

    def runs(self) -> list[ColumnElement[bool]]:
        """The conditions on :class:`Run` selecting the runs of this key."""
        return [Run.benchmark_slug == self.benchmark_slug, Run.model_key == self.model_key,
                Run.agent_name == self.agent_name, func.coalesce(Run.dataset_revision, "") == self.dataset_revision,
                Run.primary_metric == self.primary_metric]


def _columns(run: Run, table: type[AnyPool]) -> dict[str, Any]:
    """The columns naming the run's pool in ``table``: its key, whether anonymous, and for a
    submitter pool the submitter."""
    key = {**PoolKey.of_run(run)._asdict(), "anonymous": run.submitter_kind == "anonymous"}
    return {**key, "submitter_id": run.submitter_id} if table is SubmitterPool else key


def _empty(model: str) -> dict[str, Any]:
    return {"model": model, "runs": 0, "submitters": {}, "dataset_refs": {}, "nonbinary_runs": 0, "n_trials": 0,
            "n_errors": 0, "metric_sums": {}, "task_tally": stats.TaskTally().as_json(), "n_tasks": 0, "sum_total": 0.0,
            "sum_total_sq": 0.0, "sum_total_x_trials": 0.0, "sum_trials_sq": 0.0, "last_run_at": None}


_NO_CLAIM = {"claim_value": None, "claim_source_url": None, "claim_at": None}


def _set_tally(pool: AnyPool, tally: stats.TaskTally) -> None:
    moments = stats.Moments.of(tally)
    pool.task_tally = tally.as_json()
    pool.n_tasks = moments.n_tasks
    pool.sum_total, pool.sum_total_sq = moments.total, moments.total_sq
    pool.sum_total_x_trials, pool.sum_trials_sq = moments.total_x_trials, moments.trials_sq


def _count(counts: dict[str, int], key: str) -> dict[str, int]:
    return {**counts, key: counts.get(key, 0) + 1}


def add_run(pool: AnyPool, run: Run) -> None:
    """Fold one run into its pool (new JSON values are assigned, so the ORM sees the change)."""
    pool.model = run.model
    pool.runs += 1
    pool.submitters = _count(pool.submitters, run.submitter_id)
    pool.dataset_refs = _count(pool.dataset_refs, run.dataset_ref)
    pool.nonbinary_runs += 0 if run.binary else 1
    pool.n_trials += run.n_trials
    pool.n_errors += run.n_errors
    sums = dict(pool.metric_sums)
    for key, mean in run.metrics.items():
        sums[key] = sums.get(key, 0.0) + mean * run.n_trials
    pool.metric_sums = sums
    tally = stats.TaskTally.from_json(pool.task_tally)
    tally.merge(stats.TaskTally.from_json(run.task_tally))
    _set_tally(pool, tally)
    if (isinstance(pool, SubmitterPool) and run.claim_value is not None
            and (pool.claim_at is None or run.created_at >= pool.claim_at)):
        pool.claim_value, pool.claim_source_url, pool.claim_at = run.claim_value, run.claim_source_url, run.created_at
    if pool.last_run_at is None or run.created_at > pool.last_run_at:
        pool.last_run_at = run.created_at
    pool.revision += 1


def _refill(pool: AnyPool, runs: Iterable[Run]) -> None:
    revision = pool.revision
    for name, value in {**_empty(pool.model), **(_NO_CLAIM if isinstance(pool, SubmitterPool) else {})}.items():
        setattr(pool, name, value)
    pool.revision = revision
    for run in sorted(runs, key=lambda r: (r.created_at, r.id)):
        add_run(pool, run)
    pool.revision = revision + 1


def _same_pool(pool: AnyPool) -> list[ColumnElement[bool]]:
    whose = (Run.submitter_id == pool.submitter_id if isinstance(pool, SubmitterPool)
             else (Run.submitter_kind == "anonymous") == pool.anonymous)
    return [*PoolKey.of_pool(pool).runs(), whose, Run.retracted_at.is_(None)]


_POOL_OF_RUNS = (defer(Run.trials), defer(Run.dataset_row_ids))


# The pool, then the submitter's pool: always locked in this order.
_TABLES: tuple[type[AnyPool], ...] = (Pool, SubmitterPool)


async def _locked(session: AsyncSession, table: type[AnyPool], run: Run) -> AnyPool:
    key = _columns(run, table)
    query = select(table).where(*(getattr(table, name) == value for name, value in key.items())).with_for_update()
    return cast(AnyPool, (await session.execute(query)).scalar_one())


async def join(session: AsyncSession, run: Run) -> None:
    """Add a run being stored to its pools, creating them if needed, under the pools' row locks."""
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    for table in _TABLES:
        await session.execute(insert(table).values(**_columns(run, table), **_empty(run.model), revision=0)
                              .on_conflict_do_nothing())
        add_run(await _locked(session, table, run), run)


async def rebuild(session: AsyncSession, run: Run) -> None:
    """After a retraction: recount the run's pools from their remaining runs."""
    for table in _TABLES:
        pool = await _locked(session, table, run)
        runs = (await session.execute(select(Run).options(*_POOL_OF_RUNS).where(*_same_pool(pool)))).scalars()
        _refill(pool, runs)


# What pooling reads of a run, so a migration that repools reads no column a later one adds.
_POOLED_COLUMNS = (Run.id, Run.benchmark_slug, Run.model, Run.model_key, Run.agent_name, Run.dataset_ref,
                    Run.dataset_revision, Run.primary_metric, Run.metrics, Run.binary, Run.n_trials, Run.n_errors,
                    Run.task_tally, Run.claim_value, Run.claim_source_url, Run.submitter_kind, Run.submitter_id,
                    Run.created_at, Run.retracted_at)
_POOLED = load_only(*_POOLED_COLUMNS)


# What counting writes and reads besides (for the same reason).
_COUNTED = load_only(*_POOLED_COLUMNS, Run.trials, Run.pass_at_k, Run.n_tasks, Run.n_rewarded, Run.score, Run.stderr)


def recount_all(session: Session) -> None:
    """Migrations: recount every stored run with Harbor's rule and build the pools anew."""
    records = {slug: record for slug, record in session.execute(select(Benchmark.slug, Benchmark.record))}
    runs = list(session.execute(select(Run).options(_COUNTED)).scalars())
    pools: dict[tuple[Any, ...], Pool] = {}
    for run in runs:
        counting.recount(run, records[run.benchmark_slug])
        if run.retracted_at is not None:
            continue
        key = _columns(run, Pool)
        pool = pools.setdefault(tuple(key.values()), Pool(**key, **_empty(run.model), revision=0))
        add_run(pool, run)
    session.add_all(pools.values())


def repool_all(session: Session, key_of: Callable[[str], str]) -> None:
    """Migrations that change how models are named: key every stored run again with ``key_of`` and
    build every pool (and submitter pool) anew from the runs."""
    for table in _TABLES:
        session.execute(delete(table))
    runs = list(session.execute(select(Run).options(_POOLED).order_by(Run.created_at, Run.id)).scalars())
    pools: dict[tuple[Any, ...], AnyPool] = {}
    for run in runs:
        run.model_key = key_of(run.model)
        if run.retracted_at is not None:
            continue
        for table in _TABLES:
            key = _columns(run, table)
            pool = pools.setdefault((table, *key.values()), table(**key, **_empty(run.model), revision=0))
            add_run(pool, run)
    session.add_all(pools.values())


# Reads ---------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    """One pool, or pools of the same key merged (a named and an anonymous pool, or submitters' pools)."""

    benchmark: str
    model: str
    model_key: str
    agent: str
    dataset_revision: str
    primary_metric: str
    runs: int
    anonymous_runs: int
    # The submitter rule: one account is one submitter, whatever its keys (a bot key uploads for its
    # operator); anonymous runs add none, since nothing tells who is behind an address.
    submitters: frozenset[str]
    dataset_refs: frozenset[str]
    n_trials: int
    n_errors: int
    metrics: dict[str, float]
    estimate: stats.Estimate
    last_run_at: datetime | None
    pool_ids: tuple[int, ...]

    @property
    def calibration(self) -> bool:
        return is_calibration(self.agent)


def _measure(rows: Sequence[AnyPool], tally_of: dict[int, dict[str, Any]], metric: stats.MetricRange) -> Measurement:
    if len(rows) == 1:
        row = rows[0]
        moments = stats.Moments(row.n_tasks, float(row.n_trials), row.sum_total, row.sum_total_sq,
                                row.sum_total_x_trials, row.sum_trials_sq)
    else:
        merged = stats.TaskTally()
        for row in rows:
            merged.merge(stats.TaskTally.from_json(tally_of[row.id]))
        moments = stats.Moments.of(merged)
    latest = max(rows, key=lambda row: row.last_run_at or datetime.min)
    n_trials = sum(row.n_trials for row in rows)
    sums: Counter[str] = Counter()
    for row in rows:
        sums.update(row.metric_sums)
    return Measurement(
        benchmark=latest.benchmark_slug, model=latest.model, model_key=latest.model_key, agent=latest.agent_name,
        dataset_revision=latest.dataset_revision, primary_metric=latest.primary_metric,
        runs=sum(row.runs for row in rows), anonymous_runs=sum(row.runs for row in rows if row.anonymous),
        submitters=frozenset(s for row in rows if not row.anonymous for s in row.submitters),
        dataset_refs=frozenset(ref for row in rows for ref in row.dataset_refs),
        n_trials=n_trials, n_errors=sum(row.n_errors for row in rows),
        metrics={key: total / n_trials for key, total in sorted(sums.items())} if n_trials else {},
        estimate=stats.Estimate.of(moments, metric, binary=all(row.nonbinary_runs == 0 for row in rows)),
        last_run_at=latest.last_run_at, pool_ids=tuple(row.id for row in rows),
    )


async def pool_rows(session: AsyncSession, table: type[PoolT], conditions: Sequence[ColumnElement[bool]], *,
                    include_anonymous: bool) -> list[PoolT]:
    """The non-empty pools of ``table`` matching ``conditions``, their tallies not read."""
    where = [*conditions, table.runs > 0]
    if not include_anonymous:
        where.append(table.anonymous.is_(False))
    return list((await session.execute(select(table).options(defer(table.task_tally)).where(*where))).scalars())


def by_pool_key(rows: Iterable[PoolT]) -> list[list[PoolT]]:
    """Rows grouped by their :class:`PoolKey`: what may be pooled."""
    groups: dict[PoolKey, list[PoolT]] = {}
    for row in rows:
        groups.setdefault(PoolKey.of_pool(row), []).append(row)
    return list(groups.values())


async def measure(session: AsyncSession, table: type[AnyPool], groups: Sequence[Sequence[AnyPool]],
                  metrics: dict[str, stats.MetricRange]) -> list[Measurement]:
    """One measurement per group; tallies are read only for the groups that merge."""
    merging = [row.id for group in groups if len(group) > 1 for row in group]
    tally_of: dict[int, dict[str, Any]] = {}
    if merging:
        tally_of = dict((await session.execute(select(table.id, table.task_tally).where(table.id.in_(merging)))).all())
    return [_measure(group, tally_of, metrics[group[0].benchmark_slug]) for group in groups]


async def measurements(session: AsyncSession, conditions: Sequence[ColumnElement[bool]], *,
                       include_anonymous: bool, metrics: dict[str, stats.MetricRange]) -> list[Measurement]:
    """The measurements among pools matching ``conditions`` (a named and an anonymous pool merged)."""
    rows = await pool_rows(session, Pool, conditions, include_anonymous=include_anonymous)
    return await measure(session, Pool, by_pool_key(rows), metrics)


async def task_tallies(session: AsyncSession, measured: Sequence[Measurement]) -> list[stats.TaskTally]:
    """The per-task tallies of these measurements, in their order (one read of their pools' tallies)."""
    ids = [pool_id for measurement in measured for pool_id in measurement.pool_ids]
    query = select(Pool.id, Pool.task_tally).where(Pool.id.in_(ids))
    stored: dict[int, dict[str, Any]] = dict((await session.execute(query)).all()) if ids else {}
    tallies = []
    for measurement in measured:
        tally = stats.TaskTally()
        for pool_id in measurement.pool_ids:
            tally.merge(stats.TaskTally.from_json(stored[pool_id]))
        tallies.append(tally)
    return tallies


async def fingerprint(session: AsyncSession, conditions: Sequence[ColumnElement[bool]], *parts: str) -> str:
    """A validator that changes whenever a read over these pools, or the registry, could change."""
    count, revisions = (await session.execute(
        select(func.count(), func.coalesce(func.sum(Pool.revision), 0)).where(*conditions))).one()
    records, updated = (await session.execute(select(func.count(), func.max(Benchmark.updated_at)))).one()
    # The release is part of it: a new counting or decision rule must not be answered with a 304.
    text = "|".join([__version__, str(count), str(revisions), str(records), str(updated), *parts])
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'
