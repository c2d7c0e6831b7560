"""checks: verifier archives, a draft task's uploaded .tar.gz of its verifier's tests/ directory

Revision ID: 0024_verifier_archives
Revises: 0020_task_checks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024_verifier_archives"
down_revision = "0020_task_checks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "verifier_archives",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_verifier_archives_task_id", "verifier_archives", ["task_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_verifier_archives_task_id", table_name="verifier_archives")
    op.drop_table("verifier_archives")
