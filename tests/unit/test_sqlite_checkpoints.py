"""The write-ahead log reaches the SQLite database file by the process's checkpointer thread, not inside a
request's commit: the service's connections never checkpoint, and what they commit still lands in the file."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from bountyboard.config import Settings
from bountyboard.storage.engine import Database
from bountyboard.storage.sqlite_checkpoints import Checkpointer


def _rows_in_the_file(path: Path) -> int:
    """Rows of ``t`` in the database file alone: an immutable reader ignores the write-ahead log."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as reader:
        try:
            return int(reader.execute("SELECT count(*) FROM t").fetchone()[0])
        except sqlite3.OperationalError:  # the table itself is still only in the log
            return 0


def _rows_once_checkpointed(path: Path, expected: int) -> int:
    """The file's rows, once ``expected`` are there or 10 seconds have passed."""
    deadline = time.monotonic() + 10
    while (found := _rows_in_the_file(path)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _checkpointers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("wal-checkpoint")]


def test_commits_reach_the_database_file_through_the_checkpointer_thread(tmp_path: Path) -> None:
    path = tmp_path / "bountyboard.db"
    before = len(_checkpointers())

    async def scenario() -> tuple[int, int, int, int]:
        database = Database(Settings(database_url=f"sqlite+aiosqlite:///{path}", data_dir=tmp_path))
        running = len(_checkpointers())
        async with database.engine.begin() as connection:
            autocheckpoint = (await connection.exec_driver_sql("PRAGMA wal_autocheckpoint")).scalar_one()
            await connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            await connection.exec_driver_sql("INSERT INTO t VALUES (1), (2), (3)")
        # 3 rows are a few pages: SQLite's own automatic checkpoint would wait for 1,000.
        in_file = await asyncio.to_thread(_rows_once_checkpointed, path, 3)
        await database.dispose()
        return autocheckpoint, running, in_file, len(_checkpointers())

    autocheckpoint, running, in_file, after = asyncio.run(scenario())
    assert autocheckpoint == 0  # a commit never copies the log itself
    assert running == before + 1
    assert in_file == 3  # the thread copied the committed rows into the file
    assert after == before  # disposing the database stops its thread


def test_a_checkpoint_never_shows_uncommitted_writes(tmp_path: Path) -> None:
    path = tmp_path / "bountyboard.db"

    async def scenario() -> tuple[int, int]:
        database = Database(Settings(database_url=f"sqlite+aiosqlite:///{path}", data_dir=tmp_path))
        async with database.engine.begin() as connection:
            await connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            await connection.exec_driver_sql("INSERT INTO t VALUES (1)")
        async with database.engine.connect() as connection:
            transaction = await connection.begin()
            await connection.exec_driver_sql("INSERT INTO t VALUES (2)")
            await asyncio.sleep(1.0)  # five of the checkpointer's turns while the insert is open
            open_writes_in_file = _rows_in_the_file(path)
            await transaction.rollback()
        async with database.engine.connect() as connection:
            seen = (await connection.exec_driver_sql("SELECT count(*) FROM t")).scalar_one()
        await database.dispose()
        return open_writes_in_file, seen

    in_file, seen = asyncio.run(scenario())
    assert in_file == 1  # the committed row reached the file, the open one did not
    assert seen == 1


def _largest_log_under_steady_writes(tmp_path: Path, restart_frames: int) -> int:
    """Commits of 4 KiB rows for 2 s on a service-like connection (no automatic checkpoint), beside a
    checkpointer; the largest the log file grew, in bytes. Between its transactions the writer leaves the
    lock free a moment, as the service's writers do while their requests are answered."""
    path = tmp_path / f"steady-{restart_frames}.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None, timeout=5)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("CREATE TABLE t (x BLOB)")
        checkpointer = Checkpointer(path, interval=0.05, restart_frames=restart_frames)
        checkpointer.start()
        largest, log = 0, Path(f"{path}-wal")
        deadline = time.monotonic() + 2
        try:
            while time.monotonic() < deadline:
                writer.execute("BEGIN IMMEDIATE")
                writer.execute("INSERT INTO t VALUES (randomblob(4096))")
                writer.execute("COMMIT")
                largest = max(largest, log.stat().st_size)
                time.sleep(0.0002)
        finally:
            checkpointer.stop()
    return largest


def test_under_steady_writes_the_log_is_rewound_once_it_passes_its_limit(tmp_path: Path) -> None:
    never_restarted = _largest_log_under_steady_writes(tmp_path, restart_frames=10**9)
    restarted = _largest_log_under_steady_writes(tmp_path, restart_frames=200)
    # Passive checkpoints alone never rewind a log that a writer keeps appending to: it grows with every
    # commit (22-28 MB here). Rewound, it stays near its limit of 200 frames (0.8 MB; 1.4-3.4 MB seen).
    assert restarted < 8 * 2**20
    assert restarted * 4 < never_restarted
