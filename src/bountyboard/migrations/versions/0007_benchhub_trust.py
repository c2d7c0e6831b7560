"""benchhub: Harbor's per-key metrics, provenance of runs, pools kept up to date at upload

Revision ID: 0007_benchhub_trust
Revises: 0004_benchhub

Existing runs are recounted from their stored trials with Harbor's rule (an errored trial counts 0)
and pooled, so reads see the same numbers as new uploads: by migration 0011, which recounts with
the code's own models.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007_benchhub_trust"
down_revision = "0004_benchhub"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("bench_runs") as batch:
        batch.add_column(sa.Column("dataset_seed", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("dataset_row_ids", JSON, nullable=True))
        batch.add_column(sa.Column("metrics", JSON, nullable=False, server_default="{}"))
        batch.add_column(sa.Column("primary_metric", sa.String(length=64), nullable=False, server_default="reward"))
        batch.add_column(sa.Column("pass_at_k", JSON, nullable=False, server_default="{}"))
        batch.add_column(sa.Column("binary", sa.Boolean(), nullable=False, server_default=sa.true()))
        # Trials become text written in one pass (JSONB parsing 10,000 trials per upload bought nothing).
        batch.alter_column("trials", type_=sa.Text(), existing_type=JSON, existing_nullable=False,
                           postgresql_using="trials::text")
    op.create_table(
        "bench_pools",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("benchmark_slug", sa.String(length=100), nullable=False),
        sa.Column("model_key", sa.String(length=300), nullable=False),
        sa.Column("agent_name", sa.String(length=300), nullable=False),
        sa.Column("dataset_revision", sa.String(length=100), nullable=False),
        sa.Column("primary_metric", sa.String(length=64), nullable=False),
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
                                name=op.f("fk_bench_pools_benchmark_slug_bench_benchmarks")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bench_pools")),
        sa.UniqueConstraint("benchmark_slug", "model_key", "agent_name", "dataset_revision", "primary_metric",
                            "anonymous", name=op.f("uq_bench_pools_benchmark_slug")),
    )
    op.create_index(op.f("ix_bench_pools_benchmark_slug"), "bench_pools", ["benchmark_slug"])
    op.create_index(op.f("ix_bench_pools_model_key"), "bench_pools", ["model_key"])
    # The runs are recounted and pooled by the latest benchhub migration (0011), with the models
    # of today's code: they read columns this revision does not have yet.


def downgrade() -> None:
    op.drop_table("bench_pools")
    with op.batch_alter_table("bench_runs") as batch:
        for column in ("binary", "pass_at_k", "primary_metric", "metrics", "dataset_row_ids", "dataset_seed"):
            batch.drop_column(column)
        batch.alter_column("trials", type_=JSON, existing_type=sa.Text(), existing_nullable=False,
                           postgresql_using="trials::jsonb")
