"""benchhub: models keep their organisation; pools cut by submitter, so claims are judged independently

Revision ID: 0012_benchhub_model_identity
Revises: 0011_bench_run_rewarded_trials

Stored runs are keyed again (``acme/calc-1`` and ``evil/calc-1`` were one key, ``calc-1``; bare names
now join an organisation's model only through the alias table) and every pool is rebuilt from the
runs, along with the new per-submitter pools. Claims are read from the submitter pools (with their
claimant), so the pools' own claim columns go. The downgrade keys runs with the old rule again and
gives the pools their latest claims back.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

revision = "0012_benchhub_model_identity"
down_revision = "0011_bench_run_rewarded_trials"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")

# The rule before this revision, frozen here for the downgrade: the organisation dropped, and a few
# snapshots mapped to their model.
_OLD_ALIASES = {
    "claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
    "claude-opus-4-1-20250805": "claude-opus-4-1",
    "claude-haiku-4-5-20251001": "claude-haiku-4-5",
    "claude-sonnet-4-20250514": "claude-sonnet-4",
    "claude-opus-4-20250514": "claude-opus-4",
}


def _old_model_key(name: str) -> str:
    base = name.strip().rsplit("/", 1)[-1].lower()
    key = re.sub(r"-{2,}", "-", re.sub(r"[\s._:]+", "-", base)).strip("-")
    return _OLD_ALIASES.get(key, key) or name.strip().lower()


def upgrade() -> None:
    op.create_table(
        "bench_submitter_pools",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("benchmark_slug", sa.String(length=100), nullable=False),
        sa.Column("model_key", sa.String(length=300), nullable=False),
        sa.Column("agent_name", sa.String(length=300), nullable=False),
        sa.Column("dataset_revision", sa.String(length=100), nullable=False),
        sa.Column("primary_metric", sa.String(length=64), nullable=False),
        sa.Column("submitter_id", sa.String(length=64), nullable=False),
        sa.Column("anonymous", sa.Boolean(), nullable=False),
        sa.Column("model", sa.String(length=300), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("submitters", JSON, nullable=False),
        sa.Column("dataset_refs", JSON, nullable=False),
        sa.Column("nonbinary_runs", sa.Integer(), nullable=False),
        sa.Column("n_trials", sa.Integer(), nullable=False),
        sa.Column("n_errors", sa.Integer(), nullable=False),
        sa.Column("metric_sums", JSON, nullable=False),
        sa.Column("task_tally", JSON, nullable=False),
        sa.Column("n_tasks", sa.Integer(), nullable=False),
        sa.Column("sum_total", sa.Float(), nullable=False),
        sa.Column("sum_total_sq", sa.Float(), nullable=False),
        sa.Column("sum_total_x_trials", sa.Float(), nullable=False),
        sa.Column("sum_trials_sq", sa.Float(), nullable=False),
        sa.Column("claim_value", sa.Float(), nullable=True),
        sa.Column("claim_source_url", sa.String(length=2000), nullable=True),
        sa.Column("claim_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["benchmark_slug"], ["bench_benchmarks.slug"],
                                name=op.f("fk_bench_submitter_pools_benchmark_slug_bench_benchmarks")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bench_submitter_pools")),
        sa.UniqueConstraint("benchmark_slug", "model_key", "agent_name", "dataset_revision", "primary_metric",
                            "submitter_id", name=op.f("uq_bench_submitter_pools_benchmark_slug")),
    )
    op.create_index(op.f("ix_bench_submitter_pools_benchmark_slug"), "bench_submitter_pools", ["benchmark_slug"])
    op.create_index(op.f("ix_bench_submitter_pools_model_key"), "bench_submitter_pools", ["model_key"])
    from bountyboard.benchhub.aliases import model_key  # the naming rule lives in one place

    _repool(model_key)
    with op.batch_alter_table("bench_pools") as batch:
        for column in _pool_claim():
            batch.drop_column(column.name)


def _repool(key_of: Callable[[str], str]) -> None:
    from bountyboard.benchhub import pools  # so does the way pools are built

    with Session(bind=op.get_bind()) as session:
        pools.repool_all(session, key_of)
        session.commit()


def _pool_claim() -> list[sa.Column[object]]:
    return [sa.Column("claim_value", sa.Float(), nullable=True),
            sa.Column("claim_source_url", sa.String(length=2000), nullable=True),
            sa.Column("claim_at", sa.DateTime(timezone=True), nullable=True)]


# The pool's latest non-retracted claim, as the pools before this revision kept it.
_LATEST_CLAIM = """
    SELECT r.{column} FROM bench_runs r
    WHERE r.benchmark_slug = bench_pools.benchmark_slug AND r.model_key = bench_pools.model_key
      AND r.agent_name = bench_pools.agent_name AND COALESCE(r.dataset_revision, '') = bench_pools.dataset_revision
      AND r.primary_metric = bench_pools.primary_metric AND (r.submitter_kind = 'anonymous') = bench_pools.anonymous
      AND r.retracted_at IS NULL AND r.claim_value IS NOT NULL
    ORDER BY r.created_at DESC, r.id DESC LIMIT 1"""


def downgrade() -> None:
    with op.batch_alter_table("bench_pools") as batch:
        for column in _pool_claim():
            batch.add_column(column)
    _repool(_old_model_key)
    op.execute("UPDATE bench_pools SET " + ", ".join(
        f"{name} = ({_LATEST_CLAIM.format(column=column)})"
        for name, column in (("claim_value", "claim_value"), ("claim_source_url", "claim_source_url"),
                             ("claim_at", "created_at"))))
    op.drop_table("bench_submitter_pools")
