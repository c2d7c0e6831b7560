"""Migration 0020 (a task's checks, several submissions per claim) on both databases, both ways: the
check runs of existing submissions survive SQLite's rebuild of ``submissions``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command

from bountyboard.storage.migrations import alembic_config
from tests.foundation.test_migration_roles_and_versions import _NOW, Database
from tests.support.server import backends, database_url

ROWS = [
    "INSERT INTO users (id, email, display_name, role, disabled, created_at) "
    f"VALUES ('usr_1', 'a@example.com', 'someone', 'publisher', false, '{_NOW}')",
    "INSERT INTO tasks (id, publisher_id, module, title, description, status, bounty_cents, max_claims, slots_taken, "
    f"claim_ttl_seconds, deliverables, created_at, updated_at) VALUES ('task_1', 'usr_1', 'fun', 'A task', '', "
    f"'published', 1000, 3, 0, 3600, '[]', '{_NOW}', '{_NOW}')",
    "INSERT INTO claims (id, task_id, operator_id, status, review_state, holds_slot, created_at, payout_cents) "
    f"VALUES ('clm_1', 'task_1', 'usr_1', 'submitted', 'pending', true, '{_NOW}', 0)",
]


def _submission(submission_id: str, attempt: int | None = None) -> str:
    extra, value = (", attempt", f", {attempt}") if attempt else ("", "")
    return ("INSERT INTO submissions (id, claim_id, task_id, result_type, content, attachments, content_sha256, "
            f"fingerprint, created_at{extra}) VALUES ('{submission_id}', 'clm_1', 'task_1', 'text', 'x', '[]', 'h', "
            f"'f', '{_NOW}'{value})")


def _sql(database: Database, statement: str) -> list[Any]:
    cursor = database.connection.cursor()
    try:
        cursor.execute(statement)
        rows = cursor.fetchall() if cursor.description else []
        database.connection.commit()
        return list(rows)
    except Exception:
        database.connection.rollback()
        raise
    finally:
        cursor.close()


@pytest.fixture(params=backends())
def before_0020(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Database]]:
    with database_url(request.param, tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "heads")
        command.downgrade(config, "0018_check_runs")
        database = Database(url)
        try:
            yield config, database
        finally:
            database.close()


def test_checks_and_attempts_come_and_go_keeping_the_check_runs(before_0020: tuple[Any, Database]) -> None:
    config, database = before_0020
    for row in [*ROWS, _submission("sub_1"), "INSERT INTO check_runs (submission_id, status, attempts, created_at) "
                                             f"VALUES ('sub_1', 'passed', 1, '{_NOW}')"]:
        _sql(database, row)

    command.upgrade(config, "0020_task_checks")
    assert _sql(database, "SELECT submission_id, status FROM check_runs") == [("sub_1", "passed")]
    assert _sql(database, "SELECT attempt FROM submissions") == [(1,)]
    _sql(database, _submission("sub_2", attempt=2))
    _sql(database, "INSERT INTO check_runs (submission_id, status, attempts, created_at) "
                   f"VALUES ('sub_2', 'failed', 1, '{_NOW}')")
    with pytest.raises(Exception, match=r"(?i)unique"):  # one submission per claim and attempt
        _sql(database, _submission("sub_3", attempt=2))
    _sql(database, "UPDATE tasks SET checks = '{\"binding\": true}' WHERE id = 'task_1'")

    command.downgrade(config, "0018_check_runs")
    assert _sql(database, "SELECT id FROM submissions") == [("sub_1",)]  # later attempts go with the column
    assert _sql(database, "SELECT submission_id FROM check_runs") == [("sub_1",)]
    command.upgrade(config, "heads")
