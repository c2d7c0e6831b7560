"""benchhub: where a run's trials were read from (Harbor job, Inspect log, lm-eval output, Every Eval Ever)

Revision ID: 0019_bench_run_source
Revises: 0012_benchhub_model_identity

A nullable JSON column ``source`` on ``bench_runs``: ``{"format", "tool", "version"}``. Runs stored
before it were Harbor jobs or ``bench run`` jobs; they keep ``null`` (read as Harbor).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")

revision = "0019_bench_run_source"
down_revision = "0012_benchhub_model_identity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bench_runs") as batch:
        batch.add_column(sa.Column("source", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bench_runs") as batch:
        batch.drop_column("source")
