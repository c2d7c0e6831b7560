"""accounts version: a counter every change to users, bots and API keys moves

Resolved API keys are kept while this counter is unchanged (``bountyboard.stamps``). Triggers move
it, so a change made by any process, or by hand in SQL, is seen on the next request everywhere. A
key's ``last_used_at``, written in the background after use, does not move it.

Revision ID: 0009_accounts_version
Revises: 0001_foundation
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_accounts_version"
down_revision = "0001_foundation"
branch_labels = None
depends_on = None

_BUMP = "UPDATE change_counters SET value = value + 1 WHERE name = 'accounts'"
# Every column of api_keys but last_used_at.
_KEY_COLUMNS = "user_id, bot_id, kind, name, key_hash, display_prefix, scopes, created_at, expires_at, revoked_at"
_WATCHED = {"users": "UPDATE", "bots": "UPDATE", "api_keys": f"UPDATE OF {_KEY_COLUMNS}"}


def _sqlite_triggers() -> list[tuple[str, str, str]]:
    """(trigger name, change, table) of each SQLite trigger: SQLite has no statement-level trigger for
    several changes at once."""
    return [(f"{table}_{change.split()[0].lower()}_moves_accounts", change, table)
            for table, update in _WATCHED.items() for change in ("INSERT", update, "DELETE")]


def upgrade() -> None:
    op.create_table(
        "change_counters",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_change_counters")),
    )
    op.execute("INSERT INTO change_counters (name, value) VALUES ('accounts', 0)")
    if op.get_bind().dialect.name == "sqlite":
        for name, change, table in _sqlite_triggers():
            op.execute(f"CREATE TRIGGER {name} AFTER {change} ON {table} BEGIN {_BUMP}; END")
        return
    op.execute(f"CREATE FUNCTION move_accounts_version() RETURNS trigger LANGUAGE plpgsql AS "
               f"$$ BEGIN {_BUMP}; RETURN NULL; END $$")
    for table, update in _WATCHED.items():
        op.execute(f"CREATE TRIGGER {table}_moves_accounts AFTER INSERT OR {update} OR DELETE OR TRUNCATE "
                   f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION move_accounts_version()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name, _change, _table in _sqlite_triggers():
            op.execute(f"DROP TRIGGER {name}")
    else:
        for table in _WATCHED:
            op.execute(f"DROP TRIGGER {table}_moves_accounts ON {table}")
        op.execute("DROP FUNCTION move_accounts_version()")
    op.drop_table("change_counters")
