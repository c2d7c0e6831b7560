"""The engine of one process and its session factories.

SQLite (the embedded default, in WAL mode) and PostgreSQL run the same models and the same Alembic
history. Two views of one connection pool:

- ``reader``: what the sessions of requests that may write are made from. It begins no transaction
  (SQLite: no ``BEGIN``; PostgreSQL: autocommit), so the key check and a route that only reads never take
  SQLite's write lock. A request that writes begins its transaction explicitly (``unit_of_work.transaction``).
- ``snapshot_reader``: what a ``GET``'s (or ``HEAD``'s) session is made from. Its first statement begins a
  read-only transaction that every later statement of the request reads in (SQLite: a deferred ``BEGIN``;
  PostgreSQL: ``REPEATABLE READ READ ONLY``), ended when the session closes. A page built from several
  statements then shows one committed state: a check's outcome never without its effect on the claim
  (tests/foundation/test_snapshot_reads.py), where autocommit gave each statement its own.
- the engine itself: what background jobs and the CLI use (``sessionmaker``); its transactions begin
  with the first statement, on SQLite with ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from bountyboard.config import Settings, get_settings
from bountyboard.storage.migrations import private_sqlite_files, sqlite_path
from bountyboard.storage.replica import RecentWriters
from bountyboard.storage.sqlite_checkpoints import Checkpointer
from bountyboard.storage.sqlite_driver import NO_BEGIN, SNAPSHOT, InlineDBAPI, configure_sqlite
from bountyboard.storage.stamps import PostgresStamps, SQLiteStamps, Stamps
from bountyboard.storage.unit_of_work import UnitOfWorkSession

# Connections kept open: above this many requests at once, each extra connection is opened and closed
# per request (a new thread on SQLite, a new server process on PostgreSQL), so it must not be small.
# Connections open lazily: a quiet process holds only the few it has needed.
_POOL_SIZE = 20


def build_engine(settings: Settings, url: str | None = None) -> AsyncEngine:
    """The engine of the database (``url``: of its standby instead)."""
    url = url or settings.effective_database_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        private_sqlite_files(url)
        # Last in, first out: the next writer takes the connection the last one wrote on, whose page cache is
        # still valid (sqlite_driver.writer_turn).
        engine = create_async_engine(url, module=InlineDBAPI(), pool_size=_POOL_SIZE, max_overflow=_POOL_SIZE,
                                     pool_use_lifo=True)
        configure_sqlite(engine)
        return engine
    # No ping per checkout: a connection the server dropped fails its statement, SQLAlchemy then
    # discards every pooled connection as old as it, and connections are renewed every half hour.
    return create_async_engine(url, pool_size=_POOL_SIZE, max_overflow=10, pool_recycle=1800)


class Database:
    """Engine and session factories of one process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = build_engine(settings)
        path = sqlite_path(settings.effective_database_url)
        self._stamps: SQLiteStamps | PostgresStamps = (
            SQLiteStamps(path, self.engine) if self.engine.dialect.name == "sqlite"
            else PostgresStamps(self.engine.dialect.create_connect_args(self.engine.url)[1]))
        # The engine's connections leave checkpoints to this thread (sqlite_checkpoints).
        self._checkpointer = Checkpointer(path) if path is not None else None
        if self._checkpointer is not None:
            self._checkpointer.start()
        # Background jobs and the CLI: a transaction from the first statement, committed by the job.
        self.sessionmaker = self._sessions(self.engine)
        postgresql = self.engine.dialect.name == "postgresql"
        reading: dict[str, Any] = {NO_BEGIN: True}
        if postgresql:
            reading["isolation_level"] = "AUTOCOMMIT"
        snapshot: dict[str, Any] = ({"isolation_level": "REPEATABLE READ", "postgresql_readonly": True} if postgresql
                                    else {SNAPSHOT: True})
        self.reader = self.engine.execution_options(**reading)
        self.snapshot_reader = self.engine.execution_options(**snapshot)
        # Requests: no transaction until ``unit_of_work.transaction`` begins one; a GET's, one snapshot.
        self.request_sessionmaker = self._sessions(self.reader)
        self.snapshot_sessionmaker = self._sessions(self.snapshot_reader)
        # GET routes: from the standby, if there is one, as ``snapshot_reader`` (``storage.replica``).
        self.replica_engine: AsyncEngine | None = None
        self.replica_sessionmaker: async_sessionmaker[UnitOfWorkSession] | None = None
        self.recent_writers = RecentWriters(settings.read_your_writes_seconds)
        if settings.database_read_url:
            self.replica_engine = build_engine(settings, settings.database_read_url)
            self.replica_sessionmaker = self._sessions(self.replica_engine.execution_options(**snapshot))

    @staticmethod
    def _sessions(bind: AsyncEngine) -> async_sessionmaker[UnitOfWorkSession]:
        return async_sessionmaker(bind, class_=UnitOfWorkSession, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def dispose(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
        await self._stamps.close()
        await self.engine.dispose()
        if self.replica_engine is not None:
            await self.replica_engine.dispose()

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
