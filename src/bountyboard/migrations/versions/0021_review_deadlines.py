"""review deadlines: when a submission's review falls due, what happens then, and escalations

``tasks.review_within_hours`` (null: the module's default) and ``tasks.on_review_timeout`` (``accept`` or
``escalate``); on claims, ``review_due_at`` (set at submission), ``review_warn_at`` (when ``review.due`` is
emitted; cleared once it is), ``decided_by`` (``reviewer`` or ``deadline``) and ``escalated_at``; on
appeals, ``escalated_at`` (the appeal outlived its own window and only admins resolve it now).

Revision ID: 0021_review_deadlines
Revises: 0016_task_version
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_review_deadlines"
down_revision = "0016_task_version"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Plain ADD COLUMNs, not batch mode: a rebuild of tasks would drop its version trigger (0016).
    op.add_column("tasks", sa.Column("review_within_hours", sa.Float(), nullable=True))
    op.add_column("tasks", sa.Column("on_review_timeout", sa.String(10), nullable=False, server_default="accept"))
    for column in ("review_due_at", "review_warn_at", "escalated_at"):
        op.add_column("claims", sa.Column(column, _TIME, nullable=True))
        op.create_index(f"ix_claims_{column}", "claims", [column])
    op.add_column("claims", sa.Column("decided_by", sa.String(20), nullable=True))
    op.add_column("appeals", sa.Column("escalated_at", _TIME, nullable=True))


def downgrade() -> None:
    op.drop_column("appeals", "escalated_at")
    op.drop_column("claims", "decided_by")
    for column in ("review_due_at", "review_warn_at", "escalated_at"):
        op.drop_index(f"ix_claims_{column}", "claims")
        op.drop_column("claims", column)
    op.drop_column("tasks", "on_review_timeout")
    op.drop_column("tasks", "review_within_hours")
