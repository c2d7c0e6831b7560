"""Migration 0014 (OAuth) comes and goes without touching the accounts version's triggers (0009) on
api_keys: a batch rebuild of the table on SQLite would drop them, and a revoked key would then stay in
other processes' key caches."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command

from bountyboard.storage.migrations import alembic_config
from tests.support.server import database_url

pytestmark = pytest.mark.in_process


def _api_key_triggers(url: str) -> set[str]:
    connection = sqlite3.connect(url.split(":///", 1)[1])
    try:
        return {name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'api_keys'")}
    finally:
        connection.close()


def test_the_oauth_migration_keeps_the_api_key_triggers_both_ways(tmp_path: Path) -> None:
    with database_url("sqlite", tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "0009_accounts_version")
        triggers = _api_key_triggers(url)
        assert len(triggers) == 3  # insert, update, delete
        command.upgrade(config, "heads")
        assert _api_key_triggers(url) == triggers
        command.downgrade(config, "0009_accounts_version")
        assert _api_key_triggers(url) == triggers
        command.upgrade(config, "heads")
        assert _api_key_triggers(url) == triggers
