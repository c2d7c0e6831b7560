"""What wakes an idle dispatcher: the doorbell, and the news of other processes' commits.

A commit of this process that queued deliveries rings the process's ``Doorbell``. Commits of other
processes (a separate worker of the API's, one API replica of another's) reach it too, while a
dispatcher's ``Wakeup`` is listening: on PostgreSQL such a commit sends ``NOTIFY`` on
``WEBHOOKS_CHANNEL``, heard on a ``LISTEN`` connection of the dispatcher's own, which rings the
doorbell; on SQLite the waiting dispatcher watches the database's ``data_version``. The poll interval
stays as the safety net (a lost ``LISTEN`` connection is opened again; meanwhile the poll finds what is
due).

The doorbell itself and the channel are ``events.doorbell``: the commit side (``events.service``) needs
only them, and this package builds on ``events.service`` (it emits events), never the other way round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.events.doorbell import PROCESS_TOKEN, WATCH_SECONDS, WEBHOOKS_CHANNEL, Doorbell
from bountyboard.storage.engine import Database

log = logging.getLogger("bountyboard.webhooks")

class DataVersionWatch:
    """SQLite: whether another connection (of any process) committed since the dispatcher's last look,
    through the data version the request stamps read (``Database.sqlite_data_version``: a pragma of the
    library, no lock, no statement of the database). A change alone does not wake the dispatcher,
    whose pass would take the write lock: a read, which takes no lock, must also find a due row
    (``anything_due``; most commits of a busy service, the dispatcher's own among them, queue no
    delivery)."""

    def __init__(self, database: Database, anything_due: Callable[[AsyncSession], Awaitable[bool]]) -> None:
        self._database = database
        self._anything_due = anything_due
        self._seen = self._version()

    def _version(self) -> int:
        version = self._database.sqlite_data_version()
        assert version is not None  # the watch is made only for a database that has one
        return version

    def look(self) -> None:
        """Just before the dispatcher looks for due rows: whatever commits from here on is news."""
        self._seen = self._version()

    async def news(self) -> bool:
        """Whether a commit since the last look left a delivery due."""
        version = self._version()
        if version == self._seen:
            return False
        # Read after the version: every commit the version counts is visible to this read.
        self._seen = version
        async with self._database.request_sessionmaker() as session:
            return await self._anything_due(session)


async def _listen_once(connect_args: Mapping[str, Any], doorbell: Doorbell) -> None:
    """Until the connection is lost: ``LISTEN`` on a connection of its own."""

    def heard(_connection: object, _pid: int, _channel: str, sender: str) -> None:
        if sender != PROCESS_TOKEN:  # this process's own commits have rung the doorbell already
            doorbell.ring()

    connection = await asyncpg.connect(**connect_args)
    try:
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        await connection.add_listener(WEBHOOKS_CHANNEL, heard)
        doorbell.ring()  # what was queued while nobody listened is looked for now
        await lost.wait()
    finally:
        connection.terminate()


async def _listen(database: Database, doorbell: Doorbell, retry_seconds: float) -> None:
    """PostgreSQL: a notification sent by another process's commit rings this process's doorbell. A
    lost connection is opened again; meanwhile the poll finds what is due."""
    connect_args = database.engine.dialect.create_connect_args(database.engine.url)[1]
    while True:
        try:
            await _listen_once(connect_args, doorbell)
            log.warning("the connection listening for queued webhook deliveries was lost; opening another")
        except Exception:
            log.warning("could not listen for queued webhook deliveries; polling meanwhile", exc_info=True)
        await asyncio.sleep(retry_seconds)


class Wakeup:
    """What an idle dispatcher waits for: the doorbell rung, or (SQLite, while ``listening``) another
    process's commit that left a delivery due. Marked (``look``) just before each look for due rows,
    so nothing committed after that look is missed, and nothing seen by it wakes the dispatcher again.
    """

    def __init__(self, database: Database, doorbell: Doorbell, poll_seconds: float,
                 anything_due: Callable[[AsyncSession], Awaitable[bool]]) -> None:
        self.database = database
        self.doorbell = doorbell
        self.poll_seconds = poll_seconds
        self._anything_due = anything_due
        self._watch: DataVersionWatch | None = None
        self._since = doorbell.rings

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[None]:
        """Hear of deliveries queued by other processes' commits meanwhile: on PostgreSQL through
        ``LISTEN``/``NOTIFY``, on SQLite by watching the database's ``data_version``; without this,
        the poll finds them."""
        listener: asyncio.Task[None] | None = None
        if self.database.dialect == "postgresql":
            listener = asyncio.create_task(_listen(self.database, self.doorbell, max(self.poll_seconds, 1.0)),
                                           name="webhook-doorbell")
        elif self.database.sqlite_data_version() is not None:
            self._watch = DataVersionWatch(self.database, self._anything_due)
        try:
            yield
        finally:
            self._watch = None
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener

    def look(self) -> None:
        """Just before a look for due rows."""
        self._since = self.doorbell.rings
        if self._watch is not None:
            self._watch.look()

    async def wait(self) -> None:
        """Until something may have become due since the last look, at most the poll interval."""
        watch = self._watch
        await self.doorbell.wait(self.poll_seconds, self._since, None if watch is None else watch.news,
                                 every=WATCH_SECONDS)
