"""A route's session: ``ReadSession`` for a route that only reads, ``WriteSession`` for one that writes.

A request has one session (``request_session``), opened on first use and closed by
``RequestSessionMiddleware`` once the answer is sent. A ``GET``'s (or ``HEAD``'s) reads one snapshot from
its first statement to its close (``engine.Database.snapshot_reader``), so an answer built from several
statements shows one committed state; a GET never writes (tests/unit/test_get_writes_nothing.py). Any
other request's session begins no transaction by itself (``engine.Database.reader``): the key check and a
reading route's statements each read the latest committed state, and never take SQLite's write lock.
``WriteSession`` is the same session inside one unit of work (``unit_of_work.transaction``): begun when
FastAPI resolves it, committed when the route's answer is ready, before it is sent. FastAPI resolves a
route's dependencies in the order of its parameters, so a writing route lists its ``WriteSession`` after
the caller's dependency (tests/unit/test_sessions.py checks every route). With a standby (``replica``), a
GET's ``ReadSession`` is a second session, on the standby, reading one snapshot too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.types import Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware
from bountyboard.errors import Problem
from bountyboard.storage import replica
from bountyboard.storage.engine import get_database
from bountyboard.storage.stamps import Stamps
from bountyboard.storage.unit_of_work import UnitOfWorkSession, refused, transaction

# Where a request's sessions live from their first use to the end of the answer: the ASGI scope, which
# every ``Request`` object made for the request shares.
_SCOPE_SESSION = "bountyboard.session"
_SCOPE_REPLICA_SESSION = "bountyboard.replica_session"
_SCOPE_STAMPS = "bountyboard.stamps"
_READING_METHODS = ("GET", "HEAD")


def request_session(request: Request) -> UnitOfWorkSession:
    """The request's one session on the primary: a GET's reads one snapshot; any other's has no transaction
    until a ``WriteSession`` begins one."""
    session: UnitOfWorkSession | None = request.scope.get(_SCOPE_SESSION)
    if session is None:
        database = get_database()
        reading = request.method in _READING_METHODS
        session = request.scope[_SCOPE_SESSION] = (
            database.snapshot_sessionmaker if reading else database.request_sessionmaker)()
        if database.replica_sessionmaker is not None:
            marked = replica.callers(request.scope)
            session.on_every_commit = lambda: database.recent_writers.mark(marked)
    return session


SessionSource = Callable[[], AsyncSession]
"""A session made on first use: what a read answered from what the process keeps never needs."""


def request_session_source(request: Request) -> SessionSource:
    return partial(request_session, request)


async def read_session(request: Request) -> AsyncSession:
    """FastAPI dependency of a reading route: a GET's from the standby if there is one and its caller has
    not written lately (``replica``). A coroutine rather than a generator: FastAPI's cost per request grows
    with every exit it must run; :class:`RequestSessionMiddleware` closes the session."""
    database = get_database()
    if (database.replica_sessionmaker is None or request.method not in _READING_METHODS
            or database.recent_writers.wrote_recently(replica.callers(request.scope))):
        return request_session(request)
    session: UnitOfWorkSession | None = request.scope.get(_SCOPE_REPLICA_SESSION)
    if session is None:
        session = request.scope[_SCOPE_REPLICA_SESSION] = database.replica_sessionmaker()
    return session


async def write_session(request: Request) -> AsyncIterator[AsyncSession]:
    """FastAPI dependency of a writing route: the request's unit of work, committed before the answer."""
    async with transaction(request_session(request)) as session:
        yield session


ReadSession = Annotated[AsyncSession, Depends(read_session)]
"""A reading route's session: never the write lock; a GET's reads one snapshot."""
WriteSession = Annotated[AsyncSession, Depends(write_session, scope="function")]
"""A writing route's session: one transaction, begun when resolved (list it after the caller) and
committed once the answer is built, before it is sent."""

StagedSession = Annotated[AsyncSession, Depends(read_session)]
"""The session of a route whose flow runs several units of work itself, each a ``unit_of_work.transaction``
block (an upload: the bytes move between them, outside any transaction)."""


async def answered_refusal(request: Request, problem: Problem | None) -> None:
    """A route class that turns a refusal into its own answer (``site.web.PageRoute``) ends the request's
    unit of work here first (``unit_of_work.refused``), since the exception never reaches ``write_session``."""
    session: UnitOfWorkSession | None = request.scope.get(_SCOPE_SESSION)
    if session is not None and session.writing:
        await refused(session, problem)


class RequestSessionMiddleware(HTTPMiddleware):
    """Closes the request's sessions, those it opened, after the answer."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            for key in (_SCOPE_SESSION, _SCOPE_REPLICA_SESSION):
                session: UnitOfWorkSession | None = scope.pop(key, None)
                if session is not None:
                    await session.close()


async def _request_stamps(request: Request) -> Stamps | None:
    """The request's stamps (``stamps``), read once, before the first statement of its session on the
    primary; None if that session has read already (what it read may be newer than a stamp now). Kept in
    the scope, not the session: a GET answered from what the process keeps never makes a session."""
    if _SCOPE_STAMPS not in request.scope:
        session: UnitOfWorkSession | None = request.scope.get(_SCOPE_SESSION)
        request.scope[_SCOPE_STAMPS] = (
            None if session is not None and session.in_transaction() else await get_database().stamps())
    stamps: Stamps | None = request.scope[_SCOPE_STAMPS]
    return stamps


def _names_reads_of(request: Request, session: AsyncSession | None) -> bool:
    """Whether the request's stamps name what ``session`` reads: the request's own session on the primary
    (``None``: that session, made on first use), and only while it does not write, as what it computes may
    show its own uncommitted writes. A standby's session or a job's reads a state no stamp names."""
    own: UnitOfWorkSession | None = request.scope.get(_SCOPE_SESSION)
    if session is not None and session is not own:
        return False
    return own is None or not own.writing


async def state_stamp(request: Request, session: AsyncSession | None = None) -> str | None:
    """The database's state when the request began (``statecache``), for what ``session`` reads."""
    stamps = await _request_stamps(request) if _names_reads_of(request, session) else None
    return stamps.state if stamps else None


async def accounts_stamp(request: Request) -> str | None:
    """The accounts version when the request began, for what users, bots and keys alone decide (the key
    check, before the request's transaction); None once the request writes."""
    stamps = await _request_stamps(request) if _names_reads_of(request, None) else None
    return stamps.accounts if stamps else None
