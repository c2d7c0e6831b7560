"""The SQLite driver that runs statements on the event loop's thread: a write that finds another process's
write lock waits for it asleep on the loop (other coroutines run meanwhile), and gives up after its patience."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bountyboard.storage import sqlite_driver
from bountyboard.storage.sqlite_driver import InlineDBAPI


def _locked_database(path: Path) -> sqlite3.Connection:
    """A table, and another connection (as another process would) holding the write lock."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE t (x INTEGER)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    return other


def _engine(path: Path) -> AsyncEngine:
    return create_async_engine(f"sqlite+aiosqlite:///{path}", module=InlineDBAPI())


async def _count_ticks_while(work: asyncio.Task[object]) -> int:
    ticks = 0
    while not work.done():
        await asyncio.sleep(0.01)
        ticks += 1
    return ticks


def test_a_writer_waits_for_another_connection_without_holding_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "inline.db"
    other = _locked_database(path)

    async def scenario() -> tuple[int, list[int]]:
        engine = _engine(path)

        async def write() -> None:
            async with engine.begin() as connection:
                await connection.exec_driver_sql("INSERT INTO t VALUES (2)")

        async def release_later() -> None:
            await asyncio.sleep(0.3)
            other.execute("COMMIT")

        writing = asyncio.create_task(write())
        releasing = asyncio.create_task(release_later())
        ticks = await _count_ticks_while(writing)
        await asyncio.gather(writing, releasing)
        async with engine.connect() as connection:
            rows = [row[0] for row in await connection.exec_driver_sql("SELECT x FROM t ORDER BY x")]
        await engine.dispose()
        return ticks, rows

    ticks, rows = asyncio.run(scenario())
    other.close()
    assert rows == [1, 2]  # the write waited for the other transaction, then went through
    assert ticks >= 15  # about 30 ticks of 10 ms: the loop ran while the write waited


def test_a_writer_gives_up_after_its_patience(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "inline.db"
    other = _locked_database(path)
    monkeypatch.setattr(sqlite_driver, "_PATIENCE", 0.2)

    async def scenario() -> None:
        engine = _engine(path)
        try:
            async with engine.begin() as connection:
                await connection.exec_driver_sql("INSERT INTO t VALUES (2)")
        finally:
            await engine.dispose()

    with pytest.raises(OperationalError, match="database is locked"):
        asyncio.run(scenario())
    other.execute("ROLLBACK")
    other.close()
