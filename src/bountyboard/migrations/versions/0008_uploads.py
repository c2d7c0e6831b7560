"""files: uploads of claim holders

Revision ID: 0008_uploads
Revises: 0002_market
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_uploads"
down_revision = "0002_market"
branch_labels = None
depends_on = None


def upgrade() -> None:
    size = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "uploads",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("claim_id", sa.String(length=40), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("mime_type", sa.String(length=255), nullable=False),
        sa.Column("size_bytes", size, nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("object_key", sa.String(length=200), nullable=False),
        sa.Column("attached_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["claim_id"], ["claims.id"], name=op.f("fk_uploads_claim_id_claims")),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], name=op.f("fk_uploads_task_id_tasks")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uploads")),
    )
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.create_index("ix_uploads_claim_status", ["claim_id", "status"], unique=False)
        batch_op.create_index(batch_op.f("ix_uploads_task_id"), ["task_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_uploads_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_uploads_expires_at"))
        batch_op.drop_index(batch_op.f("ix_uploads_task_id"))
        batch_op.drop_index("ix_uploads_claim_status")
    op.drop_table("uploads")
