"""webhooks: signing secrets encrypted at rest (under a key derived from the server secret)

Revision ID: 0006_webhook_secret_encryption
Revises: 0003_webhooks
Create Date: 2026-11-23 02:40:00
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from bountyboard import crypto

revision = "0006_webhook_secret_encryption"
down_revision = "0003_webhooks"
branch_labels = None
depends_on = None

_COLUMNS = ("secret", "previous_secret")


def _rewrite(change: Callable[[str], str]) -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, secret, previous_secret FROM webhook_endpoints")).all()
    for endpoint_id, *values in rows:
        connection.execute(
            sa.text("UPDATE webhook_endpoints SET secret = :secret, previous_secret = :previous_secret WHERE id = :id"),
            {"id": endpoint_id, **{column: None if value is None else change(value)
                                   for column, value in zip(_COLUMNS, values, strict=True)}},
        )


def _encrypt(value: str) -> str:
    return crypto.encrypt(crypto.WEBHOOK_SECRET, value.encode()).decode("ascii")


def _decrypt(value: str) -> str:
    return crypto.decrypt(crypto.WEBHOOK_SECRET, value.encode("ascii")).decode()


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # Pages freed by this migration (the table copy, the rewritten cells) are zeroed, so no copy of a
        # secret in clear stays in the file; upgrade_database empties the write-ahead log afterwards.
        op.execute("PRAGMA secure_delete = ON")
    # A token is longer than the secret it holds.
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        for column in _COLUMNS:
            batch_op.alter_column(column, existing_type=sa.String(length=100), type_=sa.String(length=255),
                                  existing_nullable=column != "secret")
    _rewrite(_encrypt)


def downgrade() -> None:
    _rewrite(_decrypt)
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        for column in _COLUMNS:
            batch_op.alter_column(column, existing_type=sa.String(length=255), type_=sa.String(length=100),
                                  existing_nullable=column != "secret")
