"""Migration 0023 (event positions from the transaction horizon) on PostgreSQL, both ways: events counted
before it keep their cursors, a new event comes after them, and a downgrade counts on above both."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import psycopg2
import pytest
from alembic import command

from bountyboard.config import Settings
from bountyboard.events.service import IN_TRANSACTION, Owner, list_events, record
from bountyboard.storage.engine import Database
from bountyboard.storage.migrations import alembic_config
from tests.support.server import backends, database_url, psycopg_dsn

pytestmark = pytest.mark.skipif("postgresql" not in backends(), reason="PostgreSQL is not available")

_EVENT = ("INSERT INTO events (sequence, id, type, created_at, data, operator_id) "
          "VALUES (%s, %s, 'claim.reviewed', now(), '{}', 'usr_old')")


def _sql(url: str, statement: str, *parameters: object) -> list[tuple[object, ...]]:
    with contextlib.closing(psycopg2.connect(psycopg_dsn(url))) as connection, connection.cursor() as cursor:
        cursor.execute(statement, parameters)
        rows = list(cursor.fetchall()) if cursor.description else []
        connection.commit()
        return rows


async def _new_event_and_feed(url: str, tmp_path: Path) -> tuple[int, list[int]]:
    database = Database(Settings(database_url=url, data_dir=tmp_path))
    try:
        async with database.sessionmaker() as session:
            event = await record(session, "claim.reviewed", {}, operator_id="usr_old")
            await session.commit()
            events, _ = await list_events(session, Owner("usr_old"), after=2)
            return event.sequence, [e.sequence for e in events]
    finally:
        await database.dispose()


def test_old_cursors_keep_working_and_the_downgrade_counts_above(tmp_path: Path) -> None:
    with database_url("postgresql", tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "0006_webhook_secret_encryption")
        for sequence in (1, 2, 3):
            _sql(url, _EVENT, sequence, f"evt_old{sequence}")
        _sql(url, "UPDATE event_counter SET value = 3")
        command.upgrade(config, "heads")

        new, after_two = asyncio.run(_new_event_and_feed(url, tmp_path))
        assert new >= IN_TRANSACTION and new % IN_TRANSACTION == 0  # the first of its transaction
        assert after_two == [3, new]  # a cursor taken before the upgrade goes on from where it was
        assert _sql(url, "SELECT value FROM event_counter") == [(3,)]  # no longer moved on PostgreSQL

        command.downgrade(config, "0006_webhook_secret_encryption")
        assert _sql(url, "SELECT value FROM event_counter") == [(new,)]

        # Stored sequences at or above the first horizon position are refused, not renumbered.
        _sql(url, _EVENT, 2**62, "evt_far")
        with pytest.raises(RuntimeError, match="renumber"):
            command.upgrade(config, "heads")
