"""The transaction policy, in one place: where a unit of work begins and where it commits.

A request that writes is one unit of work. It begins at the edge, in the route's ``WriteSession``
dependency (``session.write_session``), once the caller is known (the key check reads before it, so
neither the check nor the body's parsing holds SQLite's write lock), and it commits there, once the
route's answer is ready and before it is sent. Flows (the services) only flush. Whatever the transaction
asked to run after it commits (``after_commit``: the webhook doorbell) runs after that commit.

- Begin (``begin``): on SQLite ``BEGIN IMMEDIATE`` in this process's writer turn, waited for before a
  connection is taken (``sqlite_driver.writer_turn``): a read-then-write never fails half-way on a lock; on PostgreSQL
  READ COMMITTED, the locking reads (``SELECT ... FOR UPDATE``) giving the same guarantees.
- Commit: at the end of ``transaction``. A refusal raised as ``Problem(...).keeping_writes()`` commits
  what the flow wrote before the problem is answered (a claim found lapsed is kept expired); any other
  exception rolls everything back.
- Reads: a GET's session reads one read-only snapshot, ended when the session closes
  (``engine.Database.snapshot_reader``); a GET never writes (tests/unit/test_get_writes_nothing.py). Any
  other request's session begins no transaction until a unit of work begins one (``engine.Database.reader``).

Background jobs and the CLI use ``Database.sessionmaker`` (a transaction from the first statement) and
commit themselves: each job is its own edge. An upload (``files.service``) runs several units of work in
one request, each a ``transaction`` block: the bytes move between them, outside any transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from sqlalchemy import Insert, Table, Update, and_, bindparam, insert, inspect, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import DeclarativeBase, Session, make_transient, make_transient_to_detached
from sqlalchemy.sql import Executable

from bountyboard.errors import Problem
from bountyboard.storage.sqlite_driver import begin_in_turn, release_turn, writer_turn


class UnitOfWorkSession(AsyncSession):
    """The sessions of this service: an ``AsyncSession`` that runs callbacks after its commit.

    ``writing`` says whether ``begin`` opened a write transaction that has not ended yet; ``on_every_commit``
    runs after each of its commits (a request's: marking its caller as a recent writer, ``replica``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writing = False
        self._after_commit: list[Callable[[], None]] = []
        self.on_every_commit: Callable[[], None] | None = None

    def after_commit(self, callback: Callable[[], None]) -> bool:
        """Run ``callback`` once this transaction commits (forgotten if it rolls back); False if it was
        already asked for."""
        if callback in self._after_commit:
            return False
        self._after_commit.append(callback)
        return True

    async def commit(self) -> None:
        callbacks, self._after_commit = self._after_commit, []
        try:
            await super().commit()
        finally:
            self.writing = False
        if self.on_every_commit is not None:
            self.on_every_commit()
        for callback in callbacks:
            callback()

    async def rollback(self) -> None:
        self._after_commit, self.writing = [], False
        await super().rollback()

    async def close(self) -> None:
        self._after_commit, self.writing = [], False
        if not self.sync_session.in_transaction():
            # Nothing began (a GET answered from what the process keeps): no connection to give back, so
            # closing does no I/O and needs no trip through SQLAlchemy's greenlet, nor anything at all when
            # the session holds no object either.
            if self.sync_session.identity_map or self.sync_session.new:
                self.sync_session.close()
            return
        await super().close()


def after_commit(session: AsyncSession, callback: Callable[[], None]) -> bool:
    """``UnitOfWorkSession.after_commit`` for a session typed as any ``AsyncSession``."""
    assert isinstance(session, UnitOfWorkSession), "sessions come from storage.engine.Database"
    return session.after_commit(callback)


def _begin(session: Session, sqlite: bool, turn: asyncio.Lock | None) -> None:
    try:
        connection = session.connection()
    except BaseException:
        release_turn(turn)  # no connection took it
        raise
    if sqlite:
        begin_in_turn(connection, turn)
    else:
        # asyncpg's adapter, out of autocommit, begins a transaction with the next statement and ends it
        # with the session's commit or rollback; the pool restores autocommit at checkin.
        connection.connection.dbapi_connection.isolation_level = "read_committed"  # type: ignore[union-attr]


async def core(session: AsyncSession, statement: Executable, parameters: Any = None) -> CursorResult[*tuple[Any, ...]]:
    """Run a Core statement (built once, on tables rather than mapped classes) on the session's connection,
    inside its transaction, without the ORM's work per statement: no autoflush (flush first when the
    statement must see pending changes), no ORM loading of the rows. In process on SQLite, the event
    counter's update took 250 us as an ORM-enabled ``update(EventCounter)`` through ``session.execute``,
    75-85 us on its table and 65-75 us through here (docs/performance.md)."""
    return await session.run_sync(lambda sync: sync.connection().execute(statement, parameters))


_INSERTS: dict[type[Any], tuple[Insert, dict[str, str]]] = {}


async def insert_new(session: AsyncSession, row: DeclarativeBase) -> None:
    """Write a new row with one Core INSERT (built once per class) instead of ``session.add`` and the unit of
    work's flush (in process, a new claim added to the flush of a changed task took it from about 340 to
    730 us: docs/performance.md). The row is the one a flush would write: the attributes set, the columns'
    defaults for the others (set on ``row`` too, as a flush sets them), NULL where there is none. ``row`` then
    joins the session as a row loaded from the database would (no second INSERT), so a change made to it
    later in the transaction is flushed as an UPDATE, not lost."""
    mapped = type(row)
    if mapped not in _INSERTS:
        columns = {prop.key: prop.columns[0].key for prop in inspect(mapped).column_attrs}
        _INSERTS[mapped] = insert(cast(Table, row.__table__)), columns
    statement, columns = _INSERTS[mapped]
    given = {column: row.__dict__[key] for key, column in columns.items() if key in row.__dict__}
    sent = (await core(session, statement, given)).last_inserted_params()
    assert not isinstance(sent, list), "one row"
    for key, column in columns.items():
        if key not in row.__dict__:
            setattr(row, key, sent.get(column))
    _join_as_loaded(session, row)


def _join_as_loaded(session: AsyncSession, row: DeclarativeBase) -> None:
    """Put ``row`` in the session as a row just read from the database: out of any session, its attribute
    history reset, back in as persistent, so the flush writes only what changes on it from here on."""
    make_transient(row)
    make_transient_to_detached(row)
    session.add(row)


_UPDATES: dict[tuple[type[Any], frozenset[str]], tuple[Update, list[str]]] = {}


def _update_of(mapped: type[Any], keys: frozenset[str]) -> tuple[Update, list[str]]:
    """``UPDATE <table> SET <the columns of keys> WHERE <primary key>``, with a parameter per column named by
    its attribute's key (``pk_<key>`` for the primary key's), and the primary key's attribute keys; built
    once per class and set of columns."""
    if (mapped, keys) not in _UPDATES:
        mapper = inspect(mapped)
        table = cast(Table, mapper.local_table)
        primary_key = [mapper.get_property_by_column(column).key for column in mapper.primary_key]
        statement = (update(table)
                     .where(and_(*(table.c[mapper.get_property(key).columns[0].key] == bindparam(f"pk_{key}")
                                   for key in primary_key)))
                     .values({mapper.get_property(key).columns[0].key: bindparam(key) for key in sorted(keys)}))
        _UPDATES[mapped, keys] = statement, primary_key
    return _UPDATES[mapped, keys]


async def write_changes(session: AsyncSession, row: DeclarativeBase) -> None:
    """Write what a flow changed on a row it loaded with one Core UPDATE by primary key, now, instead of the
    unit of work's flush (in process, the flush of a claim's or a task's few changed columns took about 280
    us, the UPDATE about 100: docs/performance.md). The row then reads as freshly loaded, its history reset,
    so the flush at commit finds nothing of it to write; a later change is flushed as usual."""
    state = inspect(row)
    changed = frozenset(key for key in state.committed_state if key in state.mapper.column_attrs)
    if not changed:
        return
    assert state.identity is not None, "a row loaded from the database, not a new one"
    statement, primary_key = _update_of(type(row), changed)
    values = {key: row.__dict__[key] for key in changed}
    values.update({f"pk_{key}": value for key, value in zip(primary_key, state.identity, strict=True)})
    await core(session, statement, values)
    _join_as_loaded(session, row)


async def begin(session: AsyncSession) -> None:
    """Begin a write transaction in a request session (one of ``Database.reader``: not a GET's), now."""
    assert isinstance(session, UnitOfWorkSession) and not session.writing, "a request session, not writing yet"
    # On SQLite this process's writers take turns, waited for before a connection is taken (writer_turn).
    sqlite = session.sync_session.get_bind().dialect.name == "sqlite"
    turn = await writer_turn() if sqlite else None
    await session.run_sync(_begin, sqlite, turn)  # one trip through SQLAlchemy's greenlet
    session.writing = True


@contextlib.asynccontextmanager
async def transaction(session: AsyncSession) -> AsyncIterator[AsyncSession]:
    """One unit of work of a request session: begun here, committed here (see the module's text)."""
    await begin(session)
    try:
        yield session
    except Problem as problem:
        if problem.keep_writes:
            await _commit(session)
        else:
            await session.rollback()
        raise
    except BaseException:
        await session.rollback()
        raise
    await _commit(session)


async def refused(session: AsyncSession, problem: Problem | None) -> None:
    """End a unit of work whose refusal the edge answers itself (a site page re-rendering its form): commit
    what a ``keeping_writes`` problem keeps, roll back anything else. The unit of work's own exit then
    finds nothing to commit."""
    if problem is not None and problem.keep_writes:
        await _commit(session)
    else:
        await session.rollback()


async def _commit(session: AsyncSession) -> None:
    try:
        await session.commit()
    except BaseException:
        await session.rollback()
        raise
