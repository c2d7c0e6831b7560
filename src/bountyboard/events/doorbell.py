"""The process's webhook doorbell: rung after a commit that queued deliveries, waited on by an idle
dispatcher (``events.delivery``).

The commit side (``events.service``) needs only this module; the waiting side (``delivery.wakeup``) adds
the news of other processes' commits: ``NOTIFY`` on ``WEBHOOKS_CHANNEL`` on PostgreSQL, the database's
``data_version`` on SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable

# Commits that queued deliveries send NOTIFY on this channel (PostgreSQL), payload the sending process.
WEBHOOKS_CHANNEL = "bountyboard_webhooks"
PROCESS_TOKEN = secrets.token_hex(8)
# An idle dispatcher on SQLite looks this often whether another process queued deliveries.
WATCH_SECONDS = 0.02


class Doorbell:
    """Wakes this process's idle dispatcher when webhook deliveries may have become due.

    Rung by this process's commits that queued deliveries (``ring``), and by the same commits of other
    processes: on PostgreSQL they send ``NOTIFY`` on ``WEBHOOKS_CHANNEL``, which the dispatcher listens
    to and rings its own doorbell with; on SQLite the waiting dispatcher watches the database's
    ``data_version`` (the ``changed`` check of ``wait``; see ``Wakeup.listening``). Rings are
    counted, so one that comes while the dispatcher is busy is not lost: ``wait(since=the count read
    before it last looked for due rows)`` returns at once.
    """

    def __init__(self) -> None:
        self.rings = 0
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def ring(self) -> None:
        self.rings += 1
        if self._event is not None:
            self._event.set()

    async def wait(self, seconds: float, since: int, changed: Callable[[], Awaitable[bool]] | None = None,
                   every: float = WATCH_SECONDS) -> None:
        """Until rung after ``since``, or ``changed()`` (asked every ``every`` seconds) is true, at most
        ``seconds``."""
        loop = asyncio.get_running_loop()
        if self._event is None or self._loop is not loop:
            self._event, self._loop = asyncio.Event(), loop
        deadline = loop.time() + seconds
        while self.rings == since:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._event.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining if changed is None else min(remaining, every)):
                    await self._event.wait()
            if changed is not None and self.rings == since and await changed():
                return


# The process's one doorbell: the commits of this process ring it, and the dispatcher the app's lifespan
# or ``bountyboard worker`` makes is given it.
doorbell = Doorbell()
