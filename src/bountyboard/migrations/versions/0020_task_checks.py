"""checks: a task's checks, and several submissions per claim (a binding check sends work back)

Revision ID: 0020_task_checks
Revises: 0018_check_runs
Depends on: 0016_task_version (the last migration of the market's tables)

* ``tasks.checks``: the publisher's checks (DESIGN.md section 13), JSON, null without checks.
* ``submissions.attempt``: 1 for the first submission of a claim, 2 after a binding check sent the
  first back, and so on; the unique ``(claim_id, attempt)`` replaces the unique ``claim_id``, so a
  failed submission stays in the claim's history.

On SQLite ``submissions`` is rebuilt (batch mode); the migration's connection does not enforce foreign
keys, so dropping the old table cascades to no check run (tests/foundation/test_migration_task_checks.py).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020_task_checks"
down_revision = "0018_check_runs"
branch_labels = None
depends_on = "0016_task_version"

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch_op:
        batch_op.add_column(sa.Column("checks", JSON, nullable=True))
    with op.batch_alter_table("submissions") as batch_op:
        batch_op.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="1"))
        batch_op.drop_constraint("uq_submissions_claim_id", type_="unique")
        batch_op.create_unique_constraint("uq_submissions_claim_attempt", ["claim_id", "attempt"])
        batch_op.create_index("ix_submissions_claim_id", ["claim_id"], unique=False)


def downgrade() -> None:
    op.execute("DELETE FROM check_runs WHERE submission_id IN (SELECT id FROM submissions WHERE attempt > 1)")
    op.execute("DELETE FROM submissions WHERE attempt > 1")
    with op.batch_alter_table("submissions") as batch_op:
        batch_op.drop_index("ix_submissions_claim_id")
        batch_op.drop_constraint("uq_submissions_claim_attempt", type_="unique")
        batch_op.create_unique_constraint("uq_submissions_claim_id", ["claim_id"])
        batch_op.drop_column("attempt")
    # Not in batch mode: SQLite would copy the table and lose its version trigger (0016); it drops the
    # column itself.
    op.drop_column("tasks", "checks")
