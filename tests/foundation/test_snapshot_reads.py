"""A GET reads one snapshot (``engine.Database.snapshot_reader``): what commits between two of its
statements shows in neither, while a session of ``reader`` (autocommit) sees it at its next statement.

The failure this holds off: a claim's status read its claim, then its check runs, in two statements; a
check's outcome and its effect on the claim commit together, and a read straddling that commit showed
the check finished on a claim it had not yet scored.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import DBAPIError

from bountyboard.clock import now
from bountyboard.config import Settings
from bountyboard.idempotency import IdempotencyRecord
from bountyboard.storage.engine import Database
from bountyboard.storage.migrations import upgrade_database
from tests.support.server import backends, database_url

pytestmark = pytest.mark.in_process

_COUNT = select(func.count()).select_from(IdempotencyRecord)


@contextlib.asynccontextmanager
async def _fresh(backend: str, tmp_path: Path) -> AsyncIterator[Database]:
    with database_url(backend, tmp_path) as url:
        await asyncio.to_thread(upgrade_database, url)  # Alembic runs its own event loop
        database = Database(Settings(database_url=url, data_dir=tmp_path))
        try:
            yield database
        finally:
            await database.dispose()


@pytest.fixture(params=backends())
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    async with _fresh(request.param, tmp_path) as database:
        yield database


async def _commit_a_record(database: Database, key: str) -> None:
    current = now()
    async with database.sessionmaker() as session:
        await session.execute(insert(IdempotencyRecord).values(
            scope_hash=key, fingerprint="f", locked_until=current, expires_at=current + timedelta(1)))
        await session.commit()


async def test_a_snapshot_session_reads_one_state_and_an_autocommit_one_the_latest(database: Database) -> None:
    async with database.snapshot_sessionmaker() as snapshot, database.request_sessionmaker() as latest:
        assert await snapshot.scalar(_COUNT) == 0
        assert await latest.scalar(_COUNT) == 0
        await _commit_a_record(database, "between")
        assert await snapshot.scalar(_COUNT) == 0  # its second statement reads its first's state
        assert await latest.scalar(_COUNT) == 1
    async with database.snapshot_sessionmaker() as later:  # a new snapshot: the commit is in it
        assert await later.scalar(_COUNT) == 1


async def test_a_snapshot_session_leaves_its_connection_as_it_found_it(database: Database) -> None:
    """The pool's connections are shared: after a snapshot, a job's write on the same pool still works
    (PostgreSQL: no read-only transaction left behind; SQLite: no transaction left open)."""
    for _ in range(3):
        async with database.snapshot_sessionmaker() as snapshot:
            await snapshot.scalar(_COUNT)
    for number in range(3):
        await _commit_a_record(database, f"after-{number}")
    async with database.request_sessionmaker() as latest:
        assert await latest.scalar(_COUNT) == 3


# SQLite has no read-only transaction: there tests/unit/test_get_writes_nothing.py holds GETs to no writes.
@pytest.mark.skipif("postgresql" not in backends(), reason="PostgreSQL is not available")
async def test_postgresql_refuses_a_write_in_a_snapshot(tmp_path: Path) -> None:
    async with _fresh("postgresql", tmp_path) as database, database.snapshot_sessionmaker() as snapshot:
        current = now()
        with pytest.raises(DBAPIError, match="read-only transaction"):
            await snapshot.execute(insert(IdempotencyRecord).values(
                scope_hash="refused", fingerprint="f", locked_until=current, expires_at=current))
