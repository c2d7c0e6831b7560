"""task version: a number every update of a task moves

The task list's and a task's ETag are computed from it (``market.listing``), instead of from a list of
the columns an answer shows: a change to any column moves it, slot changes included, whoever makes it
(the ORM, a Core UPDATE, or SQL by hand). A trigger moves it, on both databases.

Revision ID: 0016_task_version
Revises: 0013_upload_staging
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_task_version"
down_revision = "0013_upload_staging"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: SQLite adds a NOT NULL column with a default in place.
    op.add_column("tasks", sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
    if op.get_bind().dialect.name == "sqlite":
        # After the update, since a SQLite trigger cannot change the row being written; the WHEN keeps
        # the trigger's own update (and an update that sets the version itself) from moving it again.
        op.execute("CREATE TRIGGER tasks_update_moves_version AFTER UPDATE ON tasks "
                   "WHEN NEW.version = OLD.version "
                   "BEGIN UPDATE tasks SET version = OLD.version + 1 WHERE id = OLD.id; END")
        return
    op.execute("CREATE FUNCTION move_task_version() RETURNS trigger LANGUAGE plpgsql AS "
               "$$ BEGIN NEW.version := OLD.version + 1; RETURN NEW; END $$")
    op.execute("CREATE TRIGGER tasks_update_moves_version BEFORE UPDATE ON tasks "
               "FOR EACH ROW EXECUTE FUNCTION move_task_version()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER tasks_update_moves_version")
    else:
        op.execute("DROP TRIGGER tasks_update_moves_version ON tasks")
        op.execute("DROP FUNCTION move_task_version()")
    # A plain DROP COLUMN (SQLite 3.35+), not batch mode, like 0014: a rebuild would drop other triggers.
    op.drop_column("tasks", "version")
