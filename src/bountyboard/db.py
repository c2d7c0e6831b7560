"""The one place that builds the database engine, sessions and the declarative base.

SQLite (the embedded default) and PostgreSQL run the same models and the same Alembic history.
On SQLite (in WAL mode) a writing transaction starts with ``BEGIN IMMEDIATE`` so that concurrent
writers queue on the database lock instead of failing half-way through a read-then-write (within a
process they queue in ``_WriterQueue``); a request that only reads (GET, HEAD) begins no
transaction and never takes the write lock. If such a request turns out to write after all (a claim
lapsing as it is shown), its session starts a ``BEGIN IMMEDIATE`` transaction at its first locking
read or write (see ``_escalate``), which is what PostgreSQL's READ COMMITTED with
``SELECT ... FOR UPDATE`` gives the same code. SQLite's statements run on the event loop's thread
(``sqlite_inline``), not on a thread per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import weakref
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from filelock import FileLock
from sqlalchemy import JSON, DateTime, MetaData, event, make_url
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, ORMExecuteState, Session
from sqlalchemy.types import TypeDecorator
from sqlalchemy.util import await_
from starlette.types import Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware
from bountyboard.clock import as_utc
from bountyboard.config import Settings, get_settings
from bountyboard.sqlite_inline import InlineDBAPI
from bountyboard.stamps import PostgresStamps, SQLiteStamps, Stamps

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both databases (SQLite stores them naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


# JSON on SQLite, JSONB on PostgreSQL.
JSONType = JSON().with_variant(JSONB(), "postgresql")


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        # A reading session issues no BEGIN: each of its statements reads the latest committed state
        # by itself (as PostgreSQL's READ COMMITTED does), one round trip to the driver's thread fewer.
        if not connection.get_execution_options().get(_DEFERRED_BEGIN, False):
            _begin_immediate(connection)

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
    other processes (a worker, the CLI) are waited for by the driver (``sqlite_inline``). A writer that
    waits here longer than that patience goes on to the driver's own wait, so this never fails what
    did not fail.
    """

    _HELD = "bountyboard_writer_turn"
    _PATIENCE = 30.0

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def acquire(self, info: dict[str, Any]) -> None:
        """Wait for this process's turn (from SQLAlchemy's synchronous code, inside its greenlet)."""
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        with contextlib.suppress(TimeoutError):
            await_(asyncio.wait_for(lock.acquire(), self._PATIENCE))
            info[self._HELD] = lock

    def release(self, info: dict[str, Any]) -> None:
        lock = info.pop(self._HELD, None)
        if lock is not None:
            lock.release()


_writers = _WriterQueue()


def _begin_immediate(connection: Any) -> None:
    _writers.acquire(connection.info)
    connection.exec_driver_sql("BEGIN IMMEDIATE")


# Marks the sessions (and their engine's connections) of requests that only read, on SQLite.
_DEFERRED_BEGIN = "bountyboard_deferred_begin"
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _escalate(session: Session) -> None:
    """Start a transaction in a reading session, before its first locking read or write.

    Its earlier statements ran each on its own (no BEGIN), so nothing is open to end; the rows the
    write depends on are read again under the lock (the locking reads do that on both databases).
    """
    session.info[_DEFERRED_BEGIN] = False
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        _begin_immediate(connection)
    else:
        # asyncpg's adapter, out of autocommit, begins a transaction with the next statement and ends
        # it with the session's commit or rollback; the pool restores autocommit's absence at checkin.
        connection.connection.dbapi_connection.isolation_level = "read_committed"  # type: ignore[union-attr]


# Marks the session of a request that may write: its first statement, but for reads marked
# ``BEFORE_TRANSACTION``, begins its transaction, as if it began with it.
_WRITING_REQUEST = "bountyboard_writing_request"
# Execution options of a read that runs before the request's transaction (the key check), so that a
# transaction, and SQLite's write lock, do not span what the operation does before its first statement.
_BEFORE_TRANSACTION = "bountyboard_before_transaction"
BEFORE_TRANSACTION = {_BEFORE_TRANSACTION: True}
# Marks request sessions: after each commit or rollback they are back to beginning no transaction.
_REQUEST_SESSION = "bountyboard_request_session"


@event.listens_for(Session, "do_orm_execute")
def _before_locking_statement(state: ORMExecuteState) -> None:
    session = state.session
    if not session.info.get(_DEFERRED_BEGIN):
        return
    if (state.is_insert or state.is_update or state.is_delete
            or (state.is_select and getattr(state.statement, "_for_update_arg", None) is not None)
            or (session.info.get(_WRITING_REQUEST) and not state.execution_options.get(_BEFORE_TRANSACTION))):
        _escalate(session)


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
def _after_transaction(session: Session) -> None:
    if session.info.get(_REQUEST_SESSION):
        session.info[_DEFERRED_BEGIN] = True


@event.listens_for(Session, "before_flush")
def _before_write(session: Session, _context: Any, _instances: Any) -> None:
    if session.info.get(_DEFERRED_BEGIN) and (session.new or session.dirty or session.deleted):
        _escalate(session)


# Connections kept open: above this many requests at once, each extra connection is opened and closed
# per request (a new thread on SQLite, a new server process on PostgreSQL), so it must not be small.
# Connections open lazily: a quiet process holds only the few it has needed.
_POOL_SIZE = 20


def build_engine(settings: Settings) -> AsyncEngine:
    url = settings.effective_database_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        private_sqlite_files(url)
        engine = create_async_engine(url, module=InlineDBAPI(), pool_size=_POOL_SIZE, max_overflow=_POOL_SIZE)
        _configure_sqlite(engine)
        return engine
    # No ping per checkout: a connection the server dropped fails its statement, SQLAlchemy then
    # discards every pooled connection as old as it, and connections are renewed every half hour.
    return create_async_engine(url, pool_size=_POOL_SIZE, max_overflow=10, pool_recycle=1800)


class Database:
    """Engine and session factory of one process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = build_engine(settings)
        self._stamps: SQLiteStamps | PostgresStamps = (
            SQLiteStamps(_sqlite_path(settings.effective_database_url)) if self.engine.dialect.name == "sqlite"
            else PostgresStamps(self.engine.dialect.create_connect_args(self.engine.url)[1]))
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)
        # Sessions of requests: no BEGIN, COMMIT or ROLLBACK (on PostgreSQL autocommit, on SQLite no
        # transaction) until they need a transaction (_escalate): two round trips fewer for a read.
        options: dict[str, Any] = {_DEFERRED_BEGIN: True}
        if self.engine.dialect.name == "postgresql":
            options["isolation_level"] = "AUTOCOMMIT"
        self.request_sessionmaker = async_sessionmaker(
            self.engine.execution_options(**options), expire_on_commit=False,
            info={_DEFERRED_BEGIN: True, _REQUEST_SESSION: True})

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def dispose(self) -> None:
        await self._stamps.close()
        await self.engine.dispose()

    async def stamps(self) -> Stamps:
        """Names for the committed state of the database and of its accounts (``stamps``, ``statecache``)."""
        return await self._stamps.read()

    def sqlite_data_version(self) -> int | None:
        """SQLite's ``data_version`` as the stamps read it (``stamps.SQLiteStamps``); None on PostgreSQL or
        for an in-memory database."""
        return self._stamps.data_version() if isinstance(self._stamps, SQLiteStamps) else None


_database: Database | None = None


def get_database() -> Database:
    global _database
    if _database is None:
        _database = Database(get_settings())
    return _database


def set_database(database: Database | None) -> None:
    global _database
    _database = database


# The sessions opened for the current request, when a middleware asks to know them (see
# ``request_sessions``). A list shared by reference, so whatever context FastAPI runs a dependency in,
# the middleware sees the sessions it opened.
_request_sessions: ContextVar[list[AsyncSession] | None] = ContextVar("request_sessions", default=None)
# Where a request's session lives from its first use to the end of the answer: the ASGI scope, which
# every ``Request`` object made for the request shares.
_SCOPE_SESSION = "bountyboard.session"


def request_session(request: Request) -> AsyncSession:
    """The request's one session, and at most one transaction, committed by the service that writes;
    opened on first use and closed by :class:`RequestSessionMiddleware` once the answer is sent.

    Authentication reads before any transaction (``BEFORE_TRANSACTION``); a writing request's
    transaction begins with its operation's first statement, a reading request's only with a
    locking read or a write."""
    session: AsyncSession | None = request.scope.get(_SCOPE_SESSION)
    if session is None:
        session = request.scope[_SCOPE_SESSION] = get_database().request_sessionmaker()
        if request.method not in _READ_METHODS:
            session.info[_WRITING_REQUEST] = True
        tracked = _request_sessions.get()
        if tracked is not None:
            tracked.append(session)
    return session


async def get_session(request: Request) -> AsyncSession:
    """FastAPI dependency: the request's session (:func:`request_session`).

    A coroutine rather than a generator: FastAPI enters an exit stack for a dependency with ``yield``
    on every request that uses it; :class:`RequestSessionMiddleware` closes the session instead."""
    return request_session(request)


class RequestSessionMiddleware(HTTPMiddleware):
    """Closes the request's session, if it opened one, after the answer; what was not committed rolls back."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            session: AsyncSession | None = scope.pop(_SCOPE_SESSION, None)
            if session is not None:
                await session.close()


SessionDep = Annotated[AsyncSession, Depends(get_session)]
"""A route's parameter type for the request's session."""

_STAMPS = "bountyboard_stamps"


async def _request_stamps(session: AsyncSession) -> Stamps | None:
    """The stamps (``stamps``) read once per request, before its transaction begins."""
    if not session.info.get(_REQUEST_SESSION):
        return None
    if _STAMPS not in session.info:
        if session.in_transaction():  # too late: what the request read since may be newer than a stamp now
            return None
        session.info[_STAMPS] = await get_database().stamps()
    stamps: Stamps = session.info[_STAMPS]
    return stamps


async def state_stamp(session: AsyncSession) -> str | None:
    """The database's state when the request began (``statecache``); None in a writing request, whose
    own uncommitted writes what it computes may show."""
    if session.info.get(_WRITING_REQUEST):
        return None
    stamps = await _request_stamps(session)
    return stamps.state if stamps else None


async def accounts_stamp(session: AsyncSession) -> str | None:
    """The accounts version when the request began, for what users, bots and keys alone decide (the
    key check, before any write of the request); None once the request's transaction has begun."""
    stamps = await _request_stamps(session)
    return stamps.accounts if stamps else None


@contextlib.contextmanager
def request_sessions() -> Iterator[list[AsyncSession]]:
    """Collect the sessions the request opens, so a middleware can end them before it writes itself.

    FastAPI closes a request's session only after the answer is sent; on SQLite an open transaction
    holds the write lock until then.
    """
    sessions: list[AsyncSession] = []
    token = _request_sessions.set(sessions)
    try:
        yield sessions
    finally:
        _request_sessions.reset(token)


def alembic_config(url: str | None = None) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url or get_settings().effective_database_url)
    return config


def upgrade_database(url: str | None = None) -> None:
    """Apply every pending migration (all heads: each domain keeps its own branch)."""
    from alembic import command

    settings = get_settings()
    if url is None and settings.is_sqlite:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    url = url or settings.effective_database_url
    private_sqlite_files(url)
    with _migration_lock(url):
        command.upgrade(alembic_config(url), "heads")
        _empty_sqlite_wal(url)


def _empty_sqlite_wal(url: str) -> None:
    """Copy the write-ahead log into the database and truncate it: frames of pages a migration
    rewrote (secrets once kept in clear) would otherwise linger in it until overwritten."""
    path = _sqlite_path(url)
    if path is None or not Path(f"{path}-wal").exists():
        return
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # best effort: busy readers leave it for later


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def private_sqlite_files(url: str) -> None:
    """The SQLite database readable by its owner only: created 0600 before SQLite opens it (SQLite
    gives its -wal and -shm files the database file's mode), and an older file tightened."""
    path = _sqlite_path(url)
    if path is None:
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(FileNotFoundError):
            file.chmod(0o600)


def _migration_lock(url: str) -> contextlib.AbstractContextManager[object]:
    """Processes starting together migrate one after the other. On SQLite a file lock beside the
    database; PostgreSQL takes an advisory lock inside the migration transaction (migrations/env.py)."""
    path = _sqlite_path(url)
    if path is None:
        return contextlib.nullcontext()
    return FileLock(f"{path}.migrate.lock", mode=0o600)


@lru_cache
def _migration_scripts() -> Any:
    """The migration history (read once: the files do not change while running)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def pending_migrations(applied: Iterable[str]) -> set[str]:
    """The heads of this code's history that the applied versions do not cover yet.

    Alembic keeps only the newest applied revision of each branch; a revision that another one
    depends on counts as applied once its dependant is.
    """
    from alembic.util import CommandError

    scripts = _migration_scripts()
    known = []
    for revision in applied:
        try:
            scripts.get_revision(revision)
            known.append(revision)
        except CommandError:  # applied by a newer release: not ours to judge
            continue
    covered = {script.revision for script in scripts.revision_map.iterate_revisions(tuple(known), "base")}
    return set(scripts.get_heads()) - covered
