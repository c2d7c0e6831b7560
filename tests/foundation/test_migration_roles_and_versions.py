"""Migrations 0015 (users.role holds one of the roles) and 0016 (a task version every update moves) on
both databases, both ways; on SQLite neither touches the accounts version's triggers (0009) on users."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command

from bountyboard.storage.migrations import alembic_config
from tests.support.server import backends, database_url, psycopg_dsn

_NOW = "2026-01-01 12:00:00+00:00"
_USER = ("INSERT INTO users (id, email, display_name, role, disabled, created_at) "
         "VALUES ({0}, {0}, 'someone', {0}, false, '" + _NOW + "')")
_TASK = ("INSERT INTO tasks (id, publisher_id, module, title, description, status, bounty_cents, max_claims, "
         "slots_taken, claim_ttl_seconds, deliverables, created_at, updated_at) VALUES ({0}, {0}, 'fun', 'A task', "
         "'', 'published', 1000, 3, 0, 3600, '[]', '" + _NOW + "', '" + _NOW + "')")


class Database:
    """Plain SQL on the migrated database, one committed transaction a statement."""

    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        if self.sqlite:
            self.connection: Any = sqlite3.connect(url.split(":///", 1)[1])
        else:
            import psycopg2

            self.connection = psycopg2.connect(psycopg_dsn(url))
        self.mark = "?" if self.sqlite else "%s"

    def run(self, statement: str, *parameters: Any) -> list[Any]:
        cursor = self.connection.cursor()
        try:
            cursor.execute(statement.format(*[self.mark] * statement.count("{")), parameters)
            rows = cursor.fetchall() if cursor.description else []
            self.connection.commit()
            return list(rows)
        except Exception:
            self.connection.rollback()
            raise
        finally:
            cursor.close()

    def refused(self, statement: str, *parameters: Any) -> bool:
        try:
            self.run(statement, *parameters)
        except Exception as error:  # sqlite3.IntegrityError, psycopg2.errors.CheckViolation
            return "ck_users_role" in str(error)
        return False

    def user_triggers(self) -> set[str]:
        return {name for (name,) in self.run("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                                             "AND tbl_name = 'users' AND name LIKE '%moves_accounts'")}

    def close(self) -> None:
        self.connection.close()


@pytest.fixture(params=backends())
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Database]]:
    with database_url(request.param, tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "heads")
        database = Database(url)
        try:
            yield config, database
        finally:
            database.close()


def test_the_database_refuses_a_role_that_is_not_one_and_the_migration_goes_back(
        migrated: tuple[Any, Database]) -> None:
    config, database = migrated
    triggers = database.user_triggers() if database.sqlite else set()
    assert not database.refused(_USER, "usr_a", "a@example.com", "admin")
    assert database.refused(_USER, "usr_b", "b@example.com", "wizard")
    assert database.refused("UPDATE users SET role = {0} WHERE id = {0}", "Admin", "usr_a")
    assert database.run("SELECT role FROM users") == [("admin",)]

    command.downgrade(config, "0014_oauth_authorization_server")
    assert not database.refused(_USER, "usr_b", "b@example.com", "wizard")
    if database.sqlite:
        assert len(triggers) == 3 and database.user_triggers() == triggers  # insert, update, delete
    database.run("DELETE FROM users WHERE id = {0}", "usr_b")
    command.upgrade(config, "heads")
    assert database.refused(_USER, "usr_b", "b@example.com", "wizard")
    if database.sqlite:
        assert database.user_triggers() == triggers


def test_every_update_of_a_task_moves_its_version_and_the_migration_goes_back(
        migrated: tuple[Any, Database]) -> None:
    config, database = migrated
    database.run(_USER, "usr_p", "p@example.com", "publisher")
    database.run(_TASK, "task_1", "usr_p")
    version = "SELECT version FROM tasks WHERE id = 'task_1'"
    assert database.run(version) == [(1,)]
    database.run("UPDATE tasks SET slots_taken = slots_taken + 1 WHERE id = 'task_1'")
    database.run("UPDATE tasks SET slots_taken = slots_taken - 1, status = 'published' WHERE id = 'task_1'")
    assert database.run(version) == [(3,)]
    database.run("UPDATE tasks SET title = title WHERE id = 'task_1'")  # an update that changes nothing, too
    assert database.run(version) == [(4,)]

    command.downgrade(config, "0013_upload_staging")
    columns = (database.run("SELECT name FROM pragma_table_info('tasks')") if database.sqlite else
               database.run("SELECT column_name FROM information_schema.columns WHERE table_name = 'tasks'"))
    assert ("version",) not in columns and ("slots_taken",) in columns
    command.upgrade(config, "heads")
    assert database.run(version) == [(1,)]
    database.run("UPDATE tasks SET slots_taken = 1 WHERE id = 'task_1'")
    assert database.run(version) == [(2,)]
