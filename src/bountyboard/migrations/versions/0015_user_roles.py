"""user roles: users.role holds one of the roles, in the database as in the code

``users.role`` was a free VARCHAR(20); the code reads it as ``accounts.scopes.Role``. The database now
refuses any other text: on PostgreSQL a CHECK constraint; on SQLite, which cannot add a constraint to a
table without rebuilding it (and a rebuild would drop the accounts version's triggers of
0009_accounts_version on users), two triggers that abort the insert or update.

Revision ID: 0015_user_roles
Revises: 0014_oauth_authorization_server
"""

from __future__ import annotations

from alembic import op

revision = "0015_user_roles"
down_revision = "0014_oauth_authorization_server"
branch_labels = None
depends_on = None

# The members of accounts.scopes.Role when this migration was written (a migration does not follow the code).
_ROLES = ("operator", "publisher", "reviewer", "admin")
_ALLOWED = "role IN ({})".format(", ".join(f"'{role}'" for role in _ROLES))
_SQLITE_TRIGGERS = {"users_insert_checks_role": "INSERT", "users_update_checks_role": "UPDATE OF role"}


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name, change in _SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} BEFORE {change} ON users WHEN NOT (NEW.{_ALLOWED}) "
                       f"BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: ck_users_role'); END")
        return
    op.create_check_constraint("ck_users_role", "users", _ALLOWED)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER {name}")
        return
    op.drop_constraint("ck_users_role", "users", type_="check")
