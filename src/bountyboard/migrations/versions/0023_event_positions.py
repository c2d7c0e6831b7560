"""events: positions from the transaction horizon on PostgreSQL (no row shared by every writer)

Revision ID: 0023_event_positions
Revises: 0006_webhook_secret_encryption

On PostgreSQL a new event's position (``events.sequence``) is its transaction's id times 2**20 plus its
rank in that transaction (``events.service.IN_TRANSACTION``), and ``event_counter`` is no longer read
there (SQLite keeps it, under its write lock). The schema does not change; what must hold is that every
new position lies above every existing one, so that a poller's cursor taken before the upgrade keeps
working. It does once the current transaction id times 2**20 exceeds the highest stored sequence, which
this upgrade checks (a database would need more events than 2**20 per transaction run so far to fail it).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_event_positions"
down_revision = "0006_webhook_secret_encryption"
branch_labels = None
depends_on = None

IN_TRANSACTION = 2**20


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    highest, base = bind.execute(sa.text(
        "SELECT coalesce(max(sequence), 0), pg_current_xact_id()::text::bigint * :scale FROM events"),
        {"scale": IN_TRANSACTION}).one()
    if highest >= base:
        raise RuntimeError(f"events.sequence reaches {highest}, above the first horizon position {base}: "
                           "renumber the events below it before upgrading")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        # Positions handed out since are far above the counter: resume counting above them.
        bind.execute(sa.text("UPDATE event_counter SET value = (SELECT coalesce(max(sequence), 0) FROM events) "
                             "WHERE id = 1"))
