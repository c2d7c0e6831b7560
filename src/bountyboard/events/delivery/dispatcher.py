"""The webhook dispatcher: takes due deliveries from the queue, sends them signed, records each attempt.

Made once per process (the app's lifespan, ``bountyboard worker``) from the database, the settings
and the process's doorbell, and run within ``running``. Safe in any number of processes: rows are
leased (``queue``), and a lease that outlives a crashed process expires.

Each success is marked done as soon as it is known (successes that finish together share one
transaction), so a crash repeats at most the attempts that were under way: one per endpoint being
sent to, never more than ``webhook_concurrency``. Failures are recorded with the rest of the batch.

One endpoint's rows are sent one after the other in queue order, different endpoints in parallel.
After a failed attempt the endpoint's other rows of the batch go back to the queue untried and wait
as long as the failed one: a failing endpoint is retried at the pace of its schedule, not hammered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from bountyboard.config import Settings
from bountyboard.events.delivery.queue import Job, Outcome, Queue, anything_due
from bountyboard.events.delivery.send import Sender, new_client
from bountyboard.events.delivery.wakeup import Wakeup
from bountyboard.events.doorbell import Doorbell
from bountyboard.storage.engine import Database

log = logging.getLogger("bountyboard.webhooks")

# One pass keeps taking batches for about this long, then lets the worker loop look at its stop flag.
PASS_SECONDS = 2.0


class Dispatcher:
    def __init__(self, database: Database, settings: Settings, doorbell: Doorbell) -> None:
        self.database = database
        self.settings = settings
        self.queue = Queue(settings)
        self.wakeup = Wakeup(database, doorbell, settings.webhook_poll_interval_seconds, anything_due)
        self._sender: Sender | None = None
        # Whether the last pass ended because nothing was due (not because it ran its time).
        self.drained = False

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Dispatcher]:
        """What the dispatcher keeps between its passes, while the background jobs run: an HTTP client,
        so a destination's connection (and its TLS session) serves one pass after another, and the
        wake-up's ear for other processes' commits (``Wakeup.listening``)."""
        async with self.wakeup.listening():
            client = new_client(self.settings)
            self._sender = Sender(client, self.settings)
            try:
                yield self
            finally:
                self._sender = None
                await client.aclose()

    async def deliver(self) -> int:
        """The periodic job of ``bountyboard serve`` and ``bountyboard worker`` (within ``running``).

        When nothing was left to send it waits, up to the poll interval, for the wake-up: a commit
        that queued deliveries, in this process or in another one. So an event usually leaves within
        milliseconds of its commit, whichever process dispatches.
        """
        try:
            made = await self.run_pass()
        except Exception:
            # No busy loop while the database is unreachable.
            await asyncio.sleep(max(self.settings.webhook_poll_interval_seconds, 1.0))
            raise
        if self.drained:
            await self.wakeup.wait()
        return made

    async def run_pass(self) -> int:
        """Send due deliveries until none is left or the pass has run its time; the attempts made."""
        sender = self._sender
        if sender is None:
            raise RuntimeError("The dispatcher sends only within `running()`.")
        deadline = time.monotonic() + PASS_SECONDS
        made = 0
        self.drained = False
        jobs = await self._transaction((), take=True)
        while jobs:
            outcomes = await self._send_batch(sender, jobs)
            made += sum(1 for outcome in outcomes if outcome.sent)
            # What is left to record, and the next batch, in one transaction: it commits before any
            # further attempt, so a crash still repeats only the attempts under way.
            more = time.monotonic() <= deadline
            jobs = await self._transaction([outcome for outcome in outcomes if not outcome.recorded], take=more)
            if not more:
                return made
        self.drained = True
        return made

    async def _transaction(self, outcomes: Sequence[Outcome], take: bool) -> list[Job]:
        """These attempts recorded and, with ``take``, the next due rows leased (and returned), in one
        transaction."""
        if not outcomes and not take:
            return []
        async with self.database.sessionmaker() as session:
            if outcomes:
                await self.queue.record(session, outcomes)
            jobs: list[Job] = []
            if take:
                self.wakeup.look()  # whatever commits from here on wakes the dispatcher once it is idle
                jobs = await self.queue.lease(session)
            if outcomes or jobs:
                await session.commit()
            else:
                await session.rollback()
            return jobs

    async def _send_batch(self, sender: Sender, jobs: Sequence[Job]) -> list[Outcome]:
        by_endpoint: dict[str, list[Job]] = {}
        for job in jobs:
            by_endpoint.setdefault(job.endpoint_id, []).append(job)
        gate = asyncio.Semaphore(self.settings.webhook_concurrency)
        successes = _SuccessRecorder(lambda batch: self._transaction(batch, take=False))
        # Stop starting attempts once one could outlive the lease taken a moment ago.
        cutoff = time.monotonic() + self.queue.lease_seconds - self.settings.webhook_timeout_seconds - 5.0
        unfinished = len(jobs)

        async def one_endpoint(queue: list[Job]) -> list[Outcome]:
            nonlocal unfinished
            outcomes: list[Outcome] = []
            async with gate:
                for job in queue:
                    if outcomes and not outcomes[-1].succeeded:
                        outcomes.append(Outcome(job, sent=False, held_back=True))
                    elif time.monotonic() > cutoff:
                        outcomes.append(Outcome(job, sent=False))
                    else:
                        outcomes.append(await sender.send(job))
                    unfinished -= 1
                    # A success is marked done at once, unless it is the batch's last attempt: then no
                    # other attempt is made before the batch's final write, which marks it.
                    if outcomes[-1].succeeded and unfinished:
                        await successes.mark(outcomes[-1])
            return outcomes

        results = await asyncio.gather(*(one_endpoint(queue) for queue in by_endpoint.values()))
        return [outcome for group in results for outcome in group]


class _SuccessRecorder:
    """Marks successes done as they happen. Whoever finds the writer free writes every success
    waiting at that moment (a group commit), so parallel senders share transactions; ``mark`` returns
    once its outcome is written, or has failed to be (then the batch's final write records it)."""

    def __init__(self, record: Callable[[Sequence[Outcome]], Awaitable[object]]) -> None:
        self._record = record
        self._waiting: list[Outcome] = []
        self._writer = asyncio.Lock()

    async def mark(self, outcome: Outcome) -> None:
        self._waiting.append(outcome)
        async with self._writer:
            batch, self._waiting = self._waiting, []
            if not batch:  # written by the previous holder of the writer
                return
            try:
                await self._record(batch)
            except Exception:
                log.exception("could not mark %d delivered webhooks done; the batch's final write retries", len(batch))
                return
            for done in batch:
                done.recorded = True
