"""events: on SQLite, the position counter advanced by a trigger, so an event is written in one statement

Revision ID: 0025_event_counter_trigger
Revises: 0023_event_positions

An event's position on SQLite was two statements, the counter's ``UPDATE ... RETURNING`` and the event's
``INSERT``, each a round trip through the service's database layer. The event's ``INSERT`` now reads the
next position from ``event_counter`` itself (``events.service``) and this trigger moves the counter on in
the same statement. The single writer holds the database's write lock until its commit, so positions are
still handed out and committed in order, and a purge never brings one back. PostgreSQL does not use the
counter (``0023_event_positions``): nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0025_event_counter_trigger"
down_revision = "0023_event_positions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # max(): an event written with an explicit position below the counter (a restore) never moves it back.
    op.execute("CREATE TRIGGER events_advance_counter AFTER INSERT ON events BEGIN "
               "UPDATE event_counter SET value = max(value, NEW.sequence) WHERE id = 1; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER events_advance_counter")
