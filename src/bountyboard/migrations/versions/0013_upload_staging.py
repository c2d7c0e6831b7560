"""files: staging keys for presigned uploads, the key that opened a slot, and when a rejection stood

Presigned URLs now write to a staging key and the checked bytes are copied to ``object_key``, which
no URL names. Slots already open keep their URL: their old key becomes their staging key and they get
a new final key. Completed uploads keep their bytes where they are.

``claims.ended_at`` is now also set when a rejection stands (appeal denied, window closed, task
ended), which starts the retention of its files; rejections that stood before are given the time of
their appeal's resolution, else the end of their appeal window.

Revision ID: 0013_upload_staging
Revises: 0010_claim_indexes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_upload_staging"
down_revision = "0010_claim_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.add_column(sa.Column("api_key_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("staging_key", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("url_expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_uploads_api_key_status", ["api_key_id", "status"], unique=False)
    op.execute("UPDATE uploads SET staging_key = object_key, url_expires_at = expires_at, "
               "object_key = 'files/' || claim_id || '/' || id WHERE status = 'pending'")
    op.execute("UPDATE claims SET ended_at = COALESCE("
               "(SELECT appeals.resolved_at FROM appeals WHERE appeals.claim_id = claims.id), "
               "appeal_deadline, reviewed_at) "
               "WHERE status = 'rejected' AND holds_slot = false AND ended_at IS NULL")


def downgrade() -> None:
    op.execute("UPDATE uploads SET status = 'pending' WHERE status = 'receiving'")
    op.execute("UPDATE uploads SET object_key = staging_key WHERE status = 'pending' AND staging_key IS NOT NULL")
    op.execute("UPDATE claims SET ended_at = NULL WHERE status = 'rejected'")
    with op.batch_alter_table("uploads", schema=None) as batch_op:
        batch_op.drop_index("ix_uploads_api_key_status")
        batch_op.drop_column("url_expires_at")
        batch_op.drop_column("staging_key")
        batch_op.drop_column("api_key_id")
