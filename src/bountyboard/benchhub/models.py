"""Tables of the benchmark hub: benchmark records, uploaded runs and the pools reads are served from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.storage.base import Base, JSONType, UTCDateTime


class Benchmark(Base):
    """One registry record. ``record`` is the whole JSON record, as served."""

    __tablename__ = "bench_benchmarks"

    slug: Mapped[str] = mapped_column(String(100), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(30))
    reproducible: Mapped[bool] = mapped_column(Boolean)
    record: Mapped[dict[str, Any]] = mapped_column(JSONType)
    search_text: Mapped[str] = mapped_column(Text)
    # sha256 of the shipped registry record last applied; a new release overwrites a record only when
    # its shipped version changed, so edits made through the admin routes survive restarts.
    registry_sha256: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Run(Base):
    """An uploaded run. Immutable; a retraction is recorded beside it and stays visible."""

    __tablename__ = "bench_runs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    benchmark_slug: Mapped[str] = mapped_column(ForeignKey("bench_benchmarks.slug"), index=True)
    model: Mapped[str] = mapped_column(String(300))
    model_key: Mapped[str] = mapped_column(String(300), index=True)
    agent_name: Mapped[str] = mapped_column(String(300))
    agent_version: Mapped[str] = mapped_column(String(100))
    harness_name: Mapped[str] = mapped_column(String(300))
    harness_version: Mapped[str] = mapped_column(String(100))
    dataset_ref: Mapped[str] = mapped_column(String(300))
    dataset_revision: Mapped[str | None] = mapped_column(String(100))
    dataset_seed: Mapped[int | None] = mapped_column(BigInteger)
    dataset_row_ids: Mapped[list[str] | None] = mapped_column(JSONType)
    # Where the trials were read from: {"format", "tool", "version"} (DESIGN.md section 16); None for
    # runs uploaded before imports, which are Harbor jobs.
    source: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    # Harbor's per-key means, the key `score` is the mean of, and pass@k ({"k": value}).
    metrics: Mapped[dict[str, float]] = mapped_column(JSONType)
    primary_metric: Mapped[str] = mapped_column(String(64))
    pass_at_k: Mapped[dict[str, float]] = mapped_column(JSONType)
    score: Mapped[float | None] = mapped_column(Float)
    stderr: Mapped[float | None] = mapped_column(Float)
    # Every primary value was the metric's min or max (pass/fail rewards).
    binary: Mapped[bool] = mapped_column(Boolean)
    n_tasks: Mapped[int] = mapped_column(Integer)
    # Every trial (the means' denominator); the API's nTrialsTotal.
    n_trials: Mapped[int] = mapped_column(Integer)
    # Harbor's n_trials, the API's nTrials: the trials whose verifier gave rewards ({} included).
    n_rewarded: Mapped[int] = mapped_column(Integer)
    n_errors: Mapped[int] = mapped_column(Integer)
    # stats.TaskTally as JSON ({"sums": {taskId: reward sum}, "trials": {taskId: trials}}): what
    # pooling runs by task needs.
    task_tally: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # The trials as uploaded, one JSON array kept as text: written once in Rust (pydantic_core) and
    # read whole by GET /v1/bench/runs/{id}, never queried inside.
    trials: Mapped[str] = mapped_column(Text)
    claim_value: Mapped[float | None] = mapped_column(Float)
    claim_source_url: Mapped[str | None] = mapped_column(String(2000))
    bundle_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    submitter_kind: Mapped[str] = mapped_column(String(10))
    submitter_id: Mapped[str] = mapped_column(String(64), index=True)
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    bot_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    retracted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    retraction_reason: Mapped[str | None] = mapped_column(Text)
    retracted_by: Mapped[str | None] = mapped_column(String(40))


class _PoolColumns:
    """The tallies of a set of non-retracted runs pooled by task, kept up to date at upload and
    retraction, so reads cost O(pools) and never O(runs x tasks). Never deleted: a pool emptied by
    retractions has ``runs = 0``."""

    benchmark_slug: Mapped[str] = mapped_column(ForeignKey("bench_benchmarks.slug"), index=True)
    model_key: Mapped[str] = mapped_column(String(300), index=True)
    agent_name: Mapped[str] = mapped_column(String(300))
    # "" when the uploads named no revision.
    dataset_revision: Mapped[str] = mapped_column(String(100))
    primary_metric: Mapped[str] = mapped_column(String(64))
    anonymous: Mapped[bool] = mapped_column(Boolean)
    model: Mapped[str] = mapped_column(String(300))
    runs: Mapped[int] = mapped_column(Integer)
    # {submitter id: runs} and {dataset ref: runs}, so a retraction can take one run out.
    submitters: Mapped[dict[str, int]] = mapped_column(JSONType)
    dataset_refs: Mapped[dict[str, int]] = mapped_column(JSONType)
    nonbinary_runs: Mapped[int] = mapped_column(Integer)
    n_trials: Mapped[int] = mapped_column(Integer)
    n_errors: Mapped[int] = mapped_column(Integer)
    # {key: sum over trials}; divided by n_trials they are the pooled Harbor means.
    metric_sums: Mapped[dict[str, float]] = mapped_column(JSONType)
    task_tally: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # stats.Moments of task_tally, so estimates need no pass over the tasks.
    n_tasks: Mapped[int] = mapped_column(Integer)
    sum_total: Mapped[float] = mapped_column(Float)
    sum_total_sq: Mapped[float] = mapped_column(Float)
    sum_total_x_trials: Mapped[float] = mapped_column(Float)
    sum_trials_sq: Mapped[float] = mapped_column(Float)
    last_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Grows at every change: the sum over pools is the validator of the hub's ETags.
    revision: Mapped[int] = mapped_column(Integer)


class Pool(_PoolColumns, Base):
    """The non-retracted runs of one (benchmark, model, agent, dataset revision, primary metric,
    anonymous or not): what leaderboards are read from."""

    __tablename__ = "bench_pools"
    __table_args__ = (UniqueConstraint("benchmark_slug", "model_key", "agent_name", "dataset_revision",
                                       "primary_metric", "anonymous"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)


class SubmitterPool(_PoolColumns, Base):
    """The same pool cut by submitter: what a claim is judged from, where the claimant's own runs
    and the runs of everyone else are told apart (docs/benchhub.md, "Independence")."""

    __tablename__ = "bench_submitter_pools"
    __table_args__ = (UniqueConstraint("benchmark_slug", "model_key", "agent_name", "dataset_revision",
                                       "primary_metric", "submitter_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submitter_id: Mapped[str] = mapped_column(String(64))
    # The submitter's latest claim among these runs: claims are read with their claimant.
    claim_value: Mapped[float | None] = mapped_column(Float)
    claim_source_url: Mapped[str | None] = mapped_column(String(2000))
    claim_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


AnyPool = Pool | SubmitterPool
