"""The SQLite driver that runs statements on the event loop's thread: a write that finds another process's
write lock waits for it asleep on the loop (other coroutines run meanwhile), and gives up after its patience."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bountyboard.config import Settings
from bountyboard.storage import sqlite_driver
from bountyboard.storage.engine import Database
from bountyboard.storage.sqlite_driver import InlineDBAPI
from bountyboard.storage.unit_of_work import transaction


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


def test_writers_take_turns_and_even_a_free_turn_lets_the_loop_turn_first() -> None:
    queue = sqlite_driver._WriterQueue()
    queue._PATIENCE = 0.05
    held = sqlite_driver._WriterQueue._HELD

    async def run() -> None:
        first: dict[str, object] = {}
        third: dict[str, object] = {}
        loop = asyncio.get_running_loop()
        ran: list[int] = []

        def request_arriving(turn: int) -> None:  # each turn of the loop, one more request's step
            ran.append(turn)
            if turn < queue._TURNS:
                loop.call_soon(request_arriving, turn + 1)

        loop.call_soon(request_arriving, 1)
        queue.hold(first, await queue.turn())
        assert held in first and ran == list(range(1, queue._TURNS + 1))  # a free turn, after the loop's turns
        started = time.monotonic()
        assert await queue.turn() is None  # the turn is held: waits its patience, then goes on without one
        assert time.monotonic() - started >= 0.05
        waiting = asyncio.ensure_future(queue.turn())
        await asyncio.sleep(0.01)
        assert not waiting.done()
        queue.release(first)
        queue.hold(third, await waiting)
        assert held in third  # the next writer's turn, as soon as the first ends it
        queue.release(third)

    asyncio.run(run())


def test_writers_in_line_hold_no_connection_and_each_writes_on_the_one_the_last_gave_back(tmp_path: Path) -> None:
    """A unit of work waits for its turn before it takes a connection from the pool, which hands out the one
    given back last: sixteen writers at once write on one connection (whose page cache their commits leave
    valid), and no writer waiting in line holds one."""
    database = Database(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'turns.db'}", data_dir=tmp_path))
    pool = database.engine.sync_engine.pool
    writing_on: set[int] = set()
    checked_out: list[int] = []

    @event.listens_for(database.engine.sync_engine, "before_cursor_execute")
    def beginning(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement == "BEGIN IMMEDIATE":
            writing_on.add(id(connection.connection.dbapi_connection))
            checked_out.append(pool.checkedout())  # type: ignore[attr-defined]

    async def write(x: int) -> None:
        async with database.request_sessionmaker() as session, transaction(session):
            await session.execute(text("INSERT INTO t VALUES (:x)"), {"x": x})

    async def scenario() -> tuple[int, list[int], list[int]]:
        async with database.engine.begin() as connection:
            await connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        writing_on.clear()
        checked_out.clear()
        await asyncio.gather(*(write(x) for x in range(16)))
        connections, counts = len(writing_on), list(checked_out)
        async with database.snapshot_sessionmaker() as session:
            written = sorted((await session.execute(text("SELECT x FROM t"))).scalars())
        await database.dispose()
        return connections, counts, written

    connections, counts, written = asyncio.run(scenario())
    assert written == list(range(16))
    assert connections == 1
    assert counts == [1] * 16
