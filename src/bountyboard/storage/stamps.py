"""Names for the database's committed state, read once per request (see ``statecache``).

Two are read together: the state of the whole database, which any commit changes, and the accounts
version (``change_counters``, moved by triggers on users, bots and API keys; migration 0009), which
only a change to who may call changes, so resolved keys stay valid while tasks and claims are written.

SQLite: ``PRAGMA data_version`` on a connection that never writes; it changes whenever another
connection, of this process or another, commits. A pragma of the library, not a statement of the
database: no lock, no other thread. The counter is read on the same connection, and only when the
data version moved: that connection never writes, so an unchanged version means nothing was committed
since the counter was last read. The pragma (it takes a lock in the log's shared memory) is read once
per turn of the event loop, for all the requests of that turn, as PostgreSQL's question is: the answer
is read after the socket poll that delivered them, and forgotten before the callbacks of the next poll
run, so anything another process committed before a request arrived is in the answer it gets; a commit
of this process's engine forgets it at once.

PostgreSQL: the current snapshot (xmin, xmax, transactions in progress), which changes with every
commit and never recurs, and the counter, in one statement. It costs a round trip, so it is asked on
a connection of its own, once for every request that arrived while the previous question was out:
under load one round trip answers many requests. Each answer is still exact for the requests it
serves, because the question is sent after they arrived: anything committed before a request
arrived is in the answer it gets.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger("bountyboard")

_ACCOUNTS = "SELECT value FROM change_counters WHERE name = 'accounts'"
_SNAPSHOT = f"SELECT pg_current_snapshot()::text, ({_ACCOUNTS})"


@dataclass(frozen=True)
class Stamps:
    """The database's state and its accounts version when a request began; None where unknown."""

    state: str | None
    accounts: str | None


_UNKNOWN = Stamps(None, None)
# Stamps of two databases (tests open several in one process) must never compare equal.
_databases = itertools.count(1)


class SQLiteStamps:
    def __init__(self, path: Path | None, engine: AsyncEngine | None = None) -> None:
        self._path = path
        self._prefix = f"{next(_databases)}:"
        self._watcher: sqlite3.Connection | None = None
        self._last: Stamps = _UNKNOWN  # the answer of the last read, for its data version
        self._this_turn: Stamps | None = None  # the answer for the rest of this turn of the loop
        if engine is not None:  # this process's own commit ends the turn's answer at once
            event.listen(engine.sync_engine, "commit", lambda _connection: self.forget())

    def _watching(self) -> sqlite3.Connection | None:
        if self._path is not None and self._watcher is None:
            self._watcher = sqlite3.connect(self._path, check_same_thread=False)
        return self._watcher

    def data_version(self) -> int | None:
        """A number that changes whenever another connection, of any process, commits; None for an
        in-memory database, which no other connection can see."""
        watcher = self._watching()
        return None if watcher is None else int(watcher.execute("PRAGMA data_version").fetchone()[0])

    async def read(self) -> Stamps:
        if self._this_turn is None:
            self._this_turn = self._read()
            # Runs first in the next turn, before the callbacks of the requests that turn's poll delivers.
            asyncio.get_running_loop().call_soon(self.forget)
        return self._this_turn

    def forget(self) -> None:
        """End this turn's answer: the next read asks SQLite again."""
        self._this_turn = None

    def _read(self) -> Stamps:
        version = self.data_version()
        if version is None:
            return _UNKNOWN
        state = f"{self._prefix}{version}"
        if self._last.state == state:
            return self._last
        try:
            accounts = self._watching().execute(_ACCOUNTS).fetchone()  # type: ignore[union-attr]
        except sqlite3.Error:  # not migrated yet
            accounts = None
        self._last = Stamps(state, f"{self._prefix}{accounts[0]}" if accounts else None)
        return self._last

    async def close(self) -> None:
        self._this_turn = None
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
            self._last = _UNKNOWN


class PostgresStamps:
    """Snapshots asked on one connection of asyncpg's, one question for all the requests waiting."""

    def __init__(self, connect_args: Mapping[str, Any]) -> None:
        self._connect_args = connect_args
        self._prefix = f"{next(_databases)}:"
        self._connection: asyncpg.Connection | None = None
        # The answer that the requests arrived since the last question was sent are waiting for.
        self._waiting: asyncio.Future[Stamps] | None = None
        self._asking: asyncio.Task[None] | None = None

    async def read(self) -> Stamps:
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()
            if self._asking is None:
                self._asking = asyncio.create_task(self._ask())
        # Shielded: one waiting request cancelled (a client gone) must not cancel the others' answer.
        return await asyncio.shield(self._waiting)

    async def _ask(self) -> None:
        answering: asyncio.Future[Stamps] | None = None
        try:
            while self._waiting is not None:
                # Requests arriving from here on wait for the next question, sent after they arrived.
                answering, self._waiting = self._waiting, None
                answering.set_result(await self._snapshot())
        finally:
            self._asking = None
            # Cancelled (the process is stopping): no request may wait for an answer nobody will give.
            for unanswered in (answering, self._waiting):
                if unanswered is not None and not unanswered.done():
                    unanswered.cancel()
            self._waiting = None

    async def _snapshot(self) -> Stamps:
        try:
            if self._connection is None or self._connection.is_closed():
                self._connection = await asyncpg.connect(**self._connect_args)
            snapshot, accounts = await self._connection.fetchrow(_SNAPSHOT)
        except Exception:  # no stamp means no cached answer: the request reads the database itself
            log.warning("could not read the database's snapshot", exc_info=True)
            await self.close()
            return _UNKNOWN
        return Stamps(f"{self._prefix}{snapshot}", None if accounts is None else f"{self._prefix}{accounts}")

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.terminate()
