"""SQLite statements run on the event loop's own thread, for SQLAlchemy's asyncio engine.

aiosqlite gives each connection a thread, and SQLAlchemy's adapter makes four calls per statement
(cursor, execute, fetch, close): four hand-offs between threads, each a wait for the GIL, which under
load cost more than the statement (docs/performance.md). SQLite is an in-process library: a statement
of this service reads or writes a page cache, and in WAL mode a read never waits for a lock. So the
driver here is ``sqlite3`` itself behind the awaitable surface SQLAlchemy's aiosqlite dialect expects.

The one wait is the write lock. Within this process writers take turns on an asyncio lock before
``BEGIN IMMEDIATE`` (``_WriterQueue`` below); a writer of another process (a worker, the CLI, a second
replica) can still hold it. SQLite's own busy handler would sleep inside the call and stall the loop,
so these connections have no busy timeout: a statement refused with ``SQLITE_BUSY`` (it did nothing)
is tried again after an ``asyncio.sleep``, for up to ``_PATIENCE`` seconds.

The price: a long statement holds the loop, where aiosqlite let other requests run beside it. This
service's statements are index reads and single-row writes; the long ones (a site page's count over
10,000 tasks) take milliseconds.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from types import SimpleNamespace
from typing import Any, TypeVar, cast

from sqlalchemy import event
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import await_

from bountyboard.storage.sqlite_checkpoints import LOG_SIZE_LIMIT_BYTES

# What every connection of the service runs first: WAL mode with foreign keys, checkpoints left to the
# process's Checkpointer off the loop (sqlite_checkpoints), and a rewound log's file kept under its limit.
CONNECTION_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA wal_autocheckpoint=0",
    f"PRAGMA journal_size_limit={LOG_SIZE_LIMIT_BYTES}",
)

_PATIENCE = 30.0  # seconds a statement waits for another process's write lock, as busy_timeout did
_FIRST_RETRY = 0.0005
_LONGEST_RETRY = 0.02

T = TypeVar("T")


def _is_busy(error: sqlite3.OperationalError) -> bool:
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_BUSY


async def _patiently(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``, tried again while SQLite answers busy (another process holds the write lock)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _PATIENCE
    delay = _FIRST_RETRY
    while True:
        try:
            return call(*args)
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or loop.time() > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, _LONGEST_RETRY)


class InlineCursor:
    """An ``aiosqlite.Cursor`` look-alike whose calls run at once on the caller's thread."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    async def __aenter__(self) -> InlineCursor:
        return self

    async def __aexit__(self, *_: object) -> None:
        self._cursor.close()

    def __getattr__(self, name: str) -> Any:
        # The DB-API attributes SQLAlchemy's adapter reads (description, rowcount, lastrowid) are the cursor's.
        return getattr(self._cursor, name)

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> InlineCursor:
        await _patiently(self._cursor.execute, sql, parameters)
        return self

    async def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> InlineCursor:
        await _patiently(self._cursor.executemany, sql, parameters)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    async def __aiter__(self) -> AsyncIterator[Any]:
        for row in self._cursor:
            yield row


class InlineConnection:
    """An ``aiosqlite.Connection`` look-alike over one ``sqlite3`` connection, used on the loop's thread."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        # The name SQLAlchemy's adapter reads to tell an open connection (as aiosqlite's).
        self._connection = connection

    @property
    def isolation_level(self) -> str | None:
        return self._connection.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: str | None) -> None:
        self._connection.isolation_level = value  # type: ignore[assignment]

    def cursor(self) -> InlineCursor:
        return InlineCursor(self._connection.cursor())

    async def commit(self) -> None:
        await _patiently(self._connection.commit)

    async def rollback(self) -> None:
        self._connection.rollback()

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._connection.create_function(*args, **kwargs)

    async def close(self) -> None:
        self._connection.close()

    def stop(self) -> None:
        self._connection.close()


async def _connect(database: str, **kwargs: Any) -> InlineConnection:
    # No busy timeout: a busy statement is retried by _patiently, asleep on the loop, not in SQLite.
    kwargs.update(timeout=0, check_same_thread=False)
    return InlineConnection(sqlite3.connect(database, **kwargs))


class _InlineAdaptedCursor(AsyncAdapt_aiosqlite_cursor):
    """SQLAlchemy's cursor over a ``sqlite3`` cursor. SQLAlchemy's adapter awaits each of a statement's calls
    (open, execute, fetch, close) under an asyncio lock, each await a switch of greenlets out to the loop and
    back. Here opening and closing are plain calls, and the statement with its rows is one await: one is
    needed, as SQLAlchemy's ``AsyncConnection.execute`` refuses a driver that never awaits. No lock: a
    statement yields to the loop only while another process holds the write lock, and a connection serves
    one session at a time (the pool's checkout), whose statements are awaited one after another."""

    __slots__ = ()
    _awaitable_cursor_close = False

    def _make_new_cursor(self, connection: Any) -> Any:
        return connection._connection.cursor()

    def _aenter_cursor(self, cursor: Any) -> Any:
        return cursor

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        cursor = cast(sqlite3.Cursor, self._cursor)  # what _make_new_cursor made, not an awaitable cursor
        await _patiently(cursor.execute, operation, () if parameters is None else parameters)
        if cursor.description:
            self._rows = collections.deque(cursor.fetchall())

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        await _patiently(cast(sqlite3.Cursor, self._cursor).executemany, operation, seq_of_parameters)


class _InlineAdaptedConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = _InlineAdaptedCursor


    @property
    def isolation_level(self) -> str | None:
        return self._connection.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: str | None) -> None:
        self._connection.isolation_level = value


class InlineDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """What SQLAlchemy's aiosqlite dialect takes as its driver module (``create_async_engine(module=...)``)."""

    def __init__(self) -> None:
        errors = {name: getattr(sqlite3, name) for name in (
            "DatabaseError", "Error", "IntegrityError", "NotSupportedError", "OperationalError",
            "ProgrammingError", "sqlite_version", "sqlite_version_info")}
        facade = SimpleNamespace(**errors, Connection=InlineConnection, connect=_connect,
                                 __version__=sqlite3.sqlite_version)
        super().__init__(facade, sqlite3)  # type: ignore[arg-type]

    def connect(self, *args: Any, **kwargs: Any) -> _InlineAdaptedConnection:
        return _InlineAdaptedConnection(self, await_(_connect(*args, **kwargs)))  # type: ignore[arg-type]


# Execution option of the engine that request sessions use: SQLAlchemy's "begin" emits no BEGIN, so each
# statement reads the latest committed state by itself (as PostgreSQL's READ COMMITTED autocommit does)
# and never takes the write lock. A request's write transaction is begun explicitly
# (``unit_of_work.transaction``, with ``begin_immediate``).
NO_BEGIN = "bountyboard_no_begin"
# Execution option of the engine that a GET's session uses: a deferred ``BEGIN``, so the request's
# statements read one snapshot (WAL: from its first read until the session ends), without the write lock.
SNAPSHOT = "bountyboard_snapshot"


def configure_sqlite(engine: AsyncEngine) -> None:
    """Every connection in WAL mode with foreign keys, leaving checkpoints to ``sqlite_checkpoints``; a
    transaction of the plain engine (background jobs, the CLI) begins with ``BEGIN IMMEDIATE``, a snapshot's
    with ``BEGIN``; a writer's turn ends with its transaction."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in CONNECTION_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        options = connection.get_execution_options()
        if options.get(SNAPSHOT, False):
            connection.exec_driver_sql("BEGIN")
        elif not options.get(NO_BEGIN, False):
            begin_immediate(connection)

    @event.listens_for(engine.sync_engine, "commit")
    @event.listens_for(engine.sync_engine, "rollback")
    def _on_end(connection: Any) -> None:
        _writers.release(connection.info)

    @event.listens_for(engine.sync_engine.pool, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        _writers.release(record.info)  # should a transaction end unseen, its turn ends with its connection


class _WriterQueue:
    """This process's SQLite writers take turns here, first come first served, before ``BEGIN IMMEDIATE``.

    Left to SQLite, waiting writers poll the lock with sleeps that grow to 100 ms, so under load the
    lock sits free while they sleep; here a writer starts the moment the previous one ends. Writers in
    other processes (a worker, the CLI) are waited for by ``_patiently``. A writer that waits here longer
    than that patience goes on to the driver's own wait, so this never fails what did not fail.
    """

    _HELD = "bountyboard_writer_turn"
    _PATIENCE = 30.0
    # The list's p99 under the claim + submit cycle (perf.cycle, SQLite) fell with each turn: 60-92 ms with
    # none, 50-62 with one, 32-43 with two, 24-30 with three, the cycle's rate unchanged (docs/performance.md).
    _TURNS = 3

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    async def turn(self) -> asyncio.Lock | None:
        """Wait for this process's turn; the turn (to ``hold`` on the connection that writes), or None once the
        patience is spent."""
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        try:
            async with asyncio.timeout(self._PATIENCE):
                # A write on SQLite never yields between its BEGIN and its answer (its statements return at
                # once), so the requests queued behind it wait for all of it. A request read off its socket in
                # one turn of the loop starts in the next, behind whatever was queued before it: a writer that
                # steps aside for _TURNS turns, even when its turn is free, lets the requests that arrived
                # meanwhile run first.
                for _ in range(self._TURNS):
                    await asyncio.sleep(0)
                await lock.acquire()
        except TimeoutError:
            return None
        return lock

    def hold(self, info: dict[str, Any], turn: asyncio.Lock | None) -> None:
        """The connection whose ``info`` this is holds ``turn`` until its transaction ends."""
        if turn is not None:
            assert self._HELD not in info, "one turn per connection"
            info[self._HELD] = turn

    def release(self, info: dict[str, Any]) -> None:
        lock = info.pop(self._HELD, None)
        if lock is not None:
            lock.release()


_writers = _WriterQueue()


async def writer_turn() -> asyncio.Lock | None:
    """Wait for this process's writer turn (None: waited its patience, go on to SQLite's own wait). A request's
    unit of work waits before it takes a connection from the pool (``unit_of_work.begin``), so the writers
    waiting in line hold none, and each writer takes the connection the last one gave back (the pool is
    last in, first out): one connection whose page cache its own commits leave valid, where a connection
    that another wrote after must read its pages again (docs/performance.md)."""
    return await _writers.turn()


def release_turn(turn: asyncio.Lock | None) -> None:
    """End a turn that no connection holds (``writer_turn``'s caller failed to take one)."""
    if turn is not None:
        turn.release()


def begin_immediate(connection: Any) -> None:
    """Take this process's writer turn, then SQLite's write lock (a synchronous ``Connection``)."""
    begin_in_turn(connection, await_(_writers.turn()))


def begin_in_turn(connection: Any, turn: asyncio.Lock | None) -> None:
    """SQLite's write lock on ``connection`` in ``turn`` (``writer_turn``); the connection's transaction ends
    the turn."""
    _writers.hold(connection.info, turn)
    connection.exec_driver_sql("BEGIN IMMEDIATE")
