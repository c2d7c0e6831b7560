"""SQLite's stamps are read once per turn of the event loop, yet a request never gets one older than its
arrival: a commit made before a request reached the socket is in the stamp that request reads, on the
standard event loop and on uvloop (the server's); a commit of this process shows at once, in the same turn."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import uvloop
from sqlalchemy import text

from bountyboard.config import Settings
from bountyboard.storage.engine import Database
from bountyboard.storage.stamps import SQLiteStamps

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "stamps.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE t (x INTEGER)")
    return path


def _commit(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO t VALUES (1)")


@pytest.mark.parametrize("loop", LOOPS)
def test_one_pragma_per_turn_of_the_loop(database: Path, loop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    stamps = SQLiteStamps(database)
    asked = 0
    pragma = stamps.data_version

    def counted() -> int | None:
        nonlocal asked
        asked += 1
        return pragma()

    monkeypatch.setattr(stamps, "data_version", counted)

    async def scenario() -> None:
        first = await stamps.read()
        assert await stamps.read() is first and asked == 1  # the same turn: no second pragma
        _commit(database)
        await asyncio.sleep(0)
        assert (await stamps.read()).state != first.state and asked == 2  # the next turn asks again
        await stamps.close()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(scenario())


@pytest.mark.parametrize("loop", LOOPS)
def test_a_request_sees_what_was_committed_before_it_arrived(database: Path, loop: str) -> None:
    """Readers keep a stamp in hand on every turn (a loaded server); a commit, then a request on a socket:
    the stamp its handler reads is the commit's, on each of many tries."""
    stamps = SQLiteStamps(database)

    async def scenario() -> None:
        seen: asyncio.Queue[str | None] = asyncio.Queue()

        class Handler(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                async def handle() -> None:  # as uvicorn does: the request runs as a task
                    await seen.put((await stamps.read()).state)
                asyncio.get_running_loop().create_task(handle())

        async def busy_readers() -> None:
            while True:
                await stamps.read()
                await asyncio.sleep(0)

        server = await asyncio.get_running_loop().create_server(Handler, "127.0.0.1", 0)
        readers = [asyncio.create_task(busy_readers()) for _ in range(4)]
        _, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        try:
            for _ in range(50):
                before = (await stamps.read()).state
                _commit(database)  # another connection commits, then the client sends its request
                writer.write(b"GET")
                await writer.drain()
                assert await seen.get() != before
        finally:
            for reader in readers:
                reader.cancel()
            writer.close()
            server.close()
            await stamps.close()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(scenario())


def test_this_process_commit_shows_in_the_same_turn(database: Path) -> None:
    async def scenario() -> None:
        service = Database(Settings(database_url=f"sqlite+aiosqlite:///{database}", data_dir=database.parent))
        try:
            async with service.reader.connect() as connection:  # the pool's connection opened beforehand
                await connection.execute(text("SELECT 1"))
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            counter = asyncio.create_task(tick())
            await asyncio.sleep(0)
            turn, before = ticks, await service.stamps()  # this turn's answer
            async with service.reader.connect() as connection:  # no BEGIN: the statement commits by itself
                await connection.execute(text("INSERT INTO t VALUES (2)"))
                await connection.commit()
                after = await service.stamps()
                assert ticks == turn, "the write took no turn of the loop"
            assert after.state != before.state
            counter.cancel()
        finally:
            await service.dispose()

    asyncio.run(scenario())
