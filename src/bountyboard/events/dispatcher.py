"""The webhook dispatcher: takes due deliveries from the queue, sends them signed, records each attempt.

Safe in any number of processes: due rows are taken with ``SELECT ... FOR UPDATE SKIP LOCKED`` on
PostgreSQL (SQLite's ``BEGIN IMMEDIATE`` serialises the same short transaction) and leased to the
taker. A row stays due until a 2xx is recorded; a lease that outlives a crashed process expires, and
another dispatcher sends the row again (at least once, same ``webhook-id``).

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
import email.utils
import logging
import random
import secrets
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import asyncpg
import certifi
import httpx
from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import __version__
from bountyboard.clock import now, rfc3339
from bountyboard.config import Settings, get_settings
from bountyboard.events import signing
from bountyboard.events.destinations import DestinationRefused, PrivateDestination, vet
from bountyboard.events.kinds import WebhookEndpointDisabledData
from bountyboard.events.models import Event, MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from bountyboard.events.service import PROCESS_TOKEN, WEBHOOKS_CHANNEL, doorbell, emit, purge_expired_events
from bountyboard.events.transport import pinned, webhook_client
from bountyboard.events.webhooks import signing_secrets
from bountyboard.ids import new_id
from bountyboard.storage.engine import Database, get_database

log = logging.getLogger("bountyboard.webhooks")

# Delays after the 1st, 2nd, ... failed attempt (DESIGN.md section 7): ten attempts over about three days.
RETRY_DELAYS_SECONDS: tuple[int, ...] = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
MAX_ATTEMPTS = len(RETRY_DELAYS_SECONDS) + 1
JITTER = 0.1
RETRY_AFTER_CAP_SECONDS = 86400.0
EXCERPT_CHARS = 1000
_READ_LIMIT_BYTES = 4096
# A lease outlasts the longest attempt by this much; sending stops early enough to respect it.
_LEASE_MARGIN_SECONDS = 30.0
# One pass keeps taking batches for about this long, then lets the worker loop look at its stop flag.
_PASS_SECONDS = 2.0
# An idle dispatcher on SQLite looks this often whether another process queued deliveries.
_WATCH_SECONDS = 0.02


@cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle is the slow part of a new HTTP client; do it once per process.
    return ssl.create_default_context(cafile=certifi.where())


def retry_delay(attempts_made: int, time_scale: float = 1.0) -> float | None:
    """Seconds before the next attempt after ``attempts_made`` failures; None when the schedule is spent."""
    if attempts_made >= MAX_ATTEMPTS:
        return None
    base = RETRY_DELAYS_SECONDS[attempts_made - 1] * time_scale
    return base * random.uniform(1 - JITTER, 1 + JITTER)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date), capped at a day."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), RETRY_AFTER_CAP_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), RETRY_AFTER_CAP_SECONDS)


@dataclass(frozen=True)
class _Job:
    message_id: int
    token: str
    attempt: int
    message_created_at: datetime
    endpoint_id: str
    url: str
    secrets: tuple[str, ...]
    event_id: str
    event_type: str
    body: str


@dataclass
class _Outcome:
    job: _Job
    sent: bool = True  # False: handed back to the queue untried
    held_back: bool = False  # untried because an earlier attempt to the same endpoint failed
    status_code: int | None = None
    latency_ms: int | None = None
    excerpt: str | None = None
    error: str | None = None
    retry_after: float | None = None
    refused: bool = False  # the destination is not public: never retried
    recorded: bool = False  # a success already marked done

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class Dispatcher:
    def __init__(self, database: Database | None = None, settings: Settings | None = None) -> None:
        self.database = database or get_database()
        self.settings = settings or get_settings()
        self.lease_seconds = self.settings.webhook_timeout_seconds + _LEASE_MARGIN_SECONDS
        # Whether the last pass ended because nothing was due (not because it ran its time).
        self.drained = False

    async def run_pass(self, client: httpx.AsyncClient | None = None,
                       before_take: Callable[[], None] | None = None) -> int:
        """Send due deliveries until none is left or the pass has run its time; the attempts made.

        ``client`` is an HTTP client kept between passes (else one is made for this pass);
        ``before_take`` is called just before each look for due rows (``_Lookout.look``)."""
        deadline = time.monotonic() + _PASS_SECONDS
        made = 0
        own_client: httpx.AsyncClient | None = None
        self.drained = False
        try:
            jobs = await self._take(before_take)
            while jobs:
                if client is None:
                    client = own_client = new_client(self.settings)
                outcomes = await self._send_all(client, jobs)
                made += sum(1 for outcome in outcomes if outcome.sent)
                # What is left to record, and the next batch, in one transaction: it commits before any
                # further attempt, so a crash still repeats only the attempts under way.
                more = time.monotonic() <= deadline
                jobs = await self._record([outcome for outcome in outcomes if not outcome.recorded],
                                          take=more, before_take=before_take)
                if not more:
                    return made
            self.drained = True
        finally:
            if own_client is not None:
                await own_client.aclose()
        return made

    async def _take(self, before_take: Callable[[], None] | None = None) -> list[_Job]:
        async with self.database.sessionmaker() as session:
            jobs = await self._take_in(session, before_take)
            if jobs:
                await session.commit()
            else:
                await session.rollback()
            return jobs

    async def _take_in(self, session: AsyncSession, before_take: Callable[[], None] | None) -> list[_Job]:
        """Lease the next due rows in the session's transaction (the caller commits)."""
        current = now()
        due = (_due(current).order_by(WebhookMessage.id).limit(self.settings.webhook_batch_size)
               .with_for_update(of=WebhookMessage, skip_locked=True))
        token = secrets.token_hex(16)
        if before_take is not None:
            before_take()
        ids = list((await session.execute(
            update(WebhookMessage).where(WebhookMessage.id.in_(due))
            .values(lease_until=current + timedelta(seconds=self.lease_seconds), lease_token=token)
            .returning(WebhookMessage.id).execution_options(synchronize_session=False)
        )).scalars())
        if not ids:
            return []
        rows = await session.execute(
            select(WebhookMessage, Event, WebhookEndpoint)
            .join(Event, Event.sequence == WebhookMessage.event_sequence)
            .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
            .where(WebhookMessage.id.in_(ids)).order_by(WebhookMessage.id)
        )
        return [
            _Job(message_id=message.id, token=token, attempt=message.attempts + 1,
                 message_created_at=message.created_at, endpoint_id=endpoint.id, url=endpoint.url,
                 secrets=tuple(signing_secrets(endpoint)), event_id=event.id, event_type=event.type,
                 body=signing.body(event.type, rfc3339(event.created_at) or "", event.data))
            for message, event, endpoint in rows
        ]

    async def _send_all(self, client: httpx.AsyncClient, jobs: Sequence[_Job]) -> list[_Outcome]:
        by_endpoint: dict[str, list[_Job]] = {}
        for job in jobs:
            by_endpoint.setdefault(job.endpoint_id, []).append(job)
        gate = asyncio.Semaphore(self.settings.webhook_concurrency)
        successes = _SuccessRecorder(self._record)
        # Stop starting attempts once one could outlive the lease taken a moment ago.
        cutoff = time.monotonic() + self.lease_seconds - self.settings.webhook_timeout_seconds - 5.0
        unfinished = len(jobs)

        async def one_endpoint(queue: list[_Job]) -> list[_Outcome]:
            nonlocal unfinished
            outcomes: list[_Outcome] = []
            async with gate:
                for job in queue:
                    if outcomes and not outcomes[-1].succeeded:
                        outcomes.append(_Outcome(job, sent=False, held_back=True))
                    elif time.monotonic() > cutoff:
                        outcomes.append(_Outcome(job, sent=False))
                    else:
                        outcomes.append(await self._send(client, job))
                    unfinished -= 1
                    # A success is marked done at once, unless it is the batch's last attempt: then no
                    # other attempt is made before the batch's final write, which marks it.
                    if outcomes[-1].succeeded and unfinished:
                        await successes.mark(outcomes[-1])
            return outcomes

        results = await asyncio.gather(*(one_endpoint(queue) for queue in by_endpoint.values()))
        return [outcome for group in results for outcome in group]

    async def _send(self, client: httpx.AsyncClient, job: _Job) -> _Outcome:
        outcome = _Outcome(job)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.webhook_timeout_seconds):
                destination = await vet(job.url, allow_private=self.settings.webhook_allow_private)
                headers = signing.headers(job.event_id, job.body, job.secrets)
                with pinned(destination):
                    async with client.stream("POST", job.url, content=job.body.encode(), headers=headers) as answer:
                        await _read_answer(answer, outcome)
        except DestinationRefused as exc:
            outcome.error, outcome.refused = str(exc), isinstance(exc, PrivateDestination)
        except TimeoutError:
            outcome.error = f"No answer within {self.settings.webhook_timeout_seconds:g} s."
        except httpx.HTTPError as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"[:500] if str(exc) else type(exc).__name__
        outcome.latency_ms = round((time.perf_counter() - started) * 1000)
        if outcome.status_code is not None and not outcome.succeeded and outcome.error is None:
            outcome.error = (f"Redirect ({outcome.status_code}) not followed: a 2xx is required."
                             if 300 <= outcome.status_code < 400 else f"The endpoint answered {outcome.status_code}.")
        return outcome

    async def _record(self, outcomes: Sequence[_Outcome], take: bool = False,
                      before_take: Callable[[], None] | None = None) -> list[_Job]:
        """These attempts, and the new state of their rows, in one transaction; with ``take``, the next
        due rows are leased in it too (and returned)."""
        if not outcomes and not take:
            return []
        async with self.database.sessionmaker() as session:
            if outcomes:
                await self._write(session, outcomes)
            jobs = await self._take_in(session, before_take) if take else []
            if outcomes or jobs:
                await session.commit()
            else:
                await session.rollback()
            return jobs

    async def _write(self, session: AsyncSession, outcomes: Sequence[_Outcome]) -> None:
        current = now()
        release: dict[str, Any] = {"lease_until": None, "lease_token": None}
        # Successes first, one statement: it also says which rows are still there and held.
        succeeded = [outcome for outcome in outcomes if outcome.sent and outcome.succeeded]
        done = await self._update(session, succeeded, {
            **release, "status": MessageStatus.SUCCEEDED, "delivered_at": current,
            "attempts": WebhookMessage.attempts + 1})
        # A subscription deleted meanwhile took its queue rows along; its attempts are not kept.
        unsure = [outcome.job.message_id for outcome in outcomes if outcome.job.message_id not in done]
        existing = done | (set((await session.execute(
            select(WebhookMessage.id).where(WebhookMessage.id.in_(unsure)))).scalars()) if unsure else set())
        _warn_taken_over([outcome for outcome in succeeded if outcome.job.message_id in existing], done)
        kept = [outcome for outcome in outcomes if outcome.job.message_id in existing]
        attempted = [outcome for outcome in kept if outcome.sent]
        session.add_all(WebhookDelivery(
            id=new_id("dlv"), endpoint_id=o.job.endpoint_id, message_id=o.job.message_id, event_id=o.job.event_id,
            event_type=o.job.event_type, attempt=o.job.attempt, succeeded=o.succeeded, status_code=o.status_code,
            latency_ms=o.latency_ms, response_excerpt=o.excerpt, error=o.error, created_at=current,
        ) for o in attempted)
        untried = [o for o in kept if not o.sent and not o.held_back]
        _warn_taken_over(untried, await self._update(session, untried, release))
        reached = sorted({outcome.job.endpoint_id for outcome in attempted if outcome.succeeded})
        if reached:
            await session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id.in_(reached))
                                  .values(last_success_at=current).execution_options(synchronize_session=False))
        failed = [outcome for outcome in attempted if not outcome.succeeded]
        if not failed:
            return
        # Read after the successes' update: an endpoint's last success includes this batch's.
        endpoints = {endpoint.id: endpoint for endpoint in (await session.execute(
            select(WebhookEndpoint).where(WebhookEndpoint.id.in_(sorted({o.job.endpoint_id for o in failed})))
            .order_by(WebhookEndpoint.id))).scalars()}
        paused: dict[str, datetime] = {}  # endpoint -> when its failed row is due again
        for outcome in failed:
            exhausted = False
            values: dict[str, Any] = {**release, "attempts": outcome.job.attempt}
            delay = None if outcome.refused else retry_delay(outcome.job.attempt, self.settings.webhook_time_scale)
            if delay is None:
                exhausted = True
                values["status"] = MessageStatus.FAILED
            else:
                wait = max(delay, outcome.retry_after or 0.0)
                values["next_attempt_at"] = current + timedelta(seconds=wait)
            paused[outcome.job.endpoint_id] = values.get("next_attempt_at", current)
            _warn_taken_over([outcome], await self._update(session, [outcome], values))
            endpoint = endpoints.get(outcome.job.endpoint_id)
            if endpoint is not None:
                await self._judge_endpoint(session, endpoint, outcome, exhausted, current)
        for endpoint_id, due in paused.items():
            held_back = [o for o in kept if o.held_back and o.job.endpoint_id == endpoint_id]
            _warn_taken_over(held_back, await self._update(session, held_back, {**release, "next_attempt_at": due}))

    @staticmethod
    async def _update(session: AsyncSession, outcomes: Sequence[_Outcome], values: dict[str, Any]) -> set[int]:
        """Change rows this dispatcher still holds (a lease that ran out may have passed them on); the
        ids of the rows changed."""
        if not outcomes:
            return set()
        ids = [outcome.job.message_id for outcome in outcomes]
        held = WebhookMessage.id.in_(ids) & (WebhookMessage.lease_token == outcomes[0].job.token)
        result = await session.execute(
            update(WebhookMessage).where(held).values(**values).returning(WebhookMessage.id)
            .execution_options(synchronize_session=False)
        )
        return set(result.scalars())

    async def _judge_endpoint(self, session: AsyncSession, endpoint: WebhookEndpoint, outcome: _Outcome,
                              exhausted: bool, current: datetime) -> None:
        if outcome.status_code == 410:
            await _disable(session, endpoint, "The endpoint answered 410 Gone.", current)
        elif outcome.refused:
            await _disable(session, endpoint, (outcome.error or "The destination is refused.")[:200], current)
        elif exhausted and (endpoint.last_success_at is None
                            or endpoint.last_success_at < outcome.job.message_created_at):
            await _disable(session, endpoint, f"Every attempt failed for {MAX_ATTEMPTS} attempts over the whole "
                                              "retry schedule, with no successful delivery meanwhile.", current)


def _warn_taken_over(outcomes: Sequence[_Outcome], changed: set[int]) -> None:
    lost = sum(1 for outcome in outcomes if outcome.job.message_id not in changed)
    if lost:
        log.warning("%d of %d deliveries were taken over after their lease ran out; their attempts are "
                    "recorded, their state is left to the new holder", lost, len(outcomes))


def new_client(settings: Settings) -> httpx.AsyncClient:
    """The dispatcher's HTTP client (connections to a destination are reused from one attempt to the next)."""
    return webhook_client(_tls_context(), settings.webhook_timeout_seconds, settings.webhook_concurrency * 2,
                          {"user-agent": f"bountyboard-webhooks/{__version__}"})


async def _read_answer(response: httpx.Response, outcome: _Outcome) -> None:
    outcome.status_code = response.status_code
    outcome.retry_after = parse_retry_after(response.headers.get("retry-after"))
    received = b""
    async for chunk in response.aiter_bytes():
        received += chunk
        if len(received) >= _READ_LIMIT_BYTES:
            break
    outcome.excerpt = received.decode("utf-8", "replace")[:EXCERPT_CHARS] or None


class _SuccessRecorder:
    """Marks successes done as they happen. Whoever finds the writer free writes every success
    waiting at that moment (a group commit), so parallel senders share transactions; ``mark`` returns
    once its outcome is written, or has failed to be (then the batch's final write records it)."""

    def __init__(self, record: Callable[[Sequence[_Outcome]], Awaitable[object]]) -> None:
        self._record = record
        self._waiting: list[_Outcome] = []
        self._writer = asyncio.Lock()

    async def mark(self, outcome: _Outcome) -> None:
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


async def _disable(session: AsyncSession, endpoint: WebhookEndpoint, reason: str, current: datetime) -> None:
    if not endpoint.enabled:
        return
    endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at = False, reason, current
    endpoint.updated_at = current
    log.warning("webhook %s disabled: %s", endpoint.id, reason)
    await emit(session, WebhookEndpointDisabledData(webhookId=endpoint.id, url=endpoint.url, reason=reason,
                                                    disabledAt=rfc3339(current)),
               bot_id=endpoint.bot_id, operator_id=endpoint.operator_id)


def _due(current: datetime) -> Select[int]:
    """The ids of the queue rows due at ``current`` and held by no live lease, to enabled endpoints."""
    return (
        select(WebhookMessage.id)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
        .where(WebhookMessage.status == MessageStatus.PENDING, WebhookMessage.next_attempt_at <= current,
               (WebhookMessage.lease_until.is_(None)) | (WebhookMessage.lease_until < current),
               WebhookEndpoint.enabled.is_(True))
    )


class _DataVersionWatch:
    """SQLite: whether another connection (of any process) committed since the dispatcher's last look,
    through the data version the request stamps read (``Database.sqlite_data_version``: a pragma of the
    library, no lock, no statement of the database). A change alone does not wake the dispatcher,
    whose pass would take the write lock: a read, which takes no lock, must also find a due row (most
    commits of a busy service, the dispatcher's own among them, queue no delivery)."""

    def __init__(self, database: Database, version: int) -> None:
        self._database = database
        self._seen = version

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
            return (await session.execute(_due(now()).limit(1))).first() is not None


def _heard(_connection: object, _pid: int, _channel: str, sender: str) -> None:
    if sender != PROCESS_TOKEN:  # this process's own commits have rung the doorbell already
        doorbell.ring()


async def _listen_once(connect_args: Mapping[str, Any]) -> None:
    """Until the connection is lost: ``LISTEN`` on a connection of its own."""
    connection = await asyncpg.connect(**connect_args)
    try:
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        await connection.add_listener(WEBHOOKS_CHANNEL, _heard)
        doorbell.ring()  # what was queued while nobody listened is looked for now
        await lost.wait()
    finally:
        connection.terminate()


async def _listen(database: Database, retry_seconds: float) -> None:
    """PostgreSQL: a notification sent by another process's commit rings this process's doorbell. A
    lost connection is opened again; meanwhile the poll finds what is due."""
    connect_args = database.engine.dialect.create_connect_args(database.engine.url)[1]
    while True:
        try:
            await _listen_once(connect_args)
            log.warning("the connection listening for queued webhook deliveries was lost; opening another")
        except Exception:
            log.warning("could not listen for queued webhook deliveries; polling meanwhile", exc_info=True)
        await asyncio.sleep(retry_seconds)


class _Lookout:
    """What an idle dispatcher waits for: the doorbell rung, or (SQLite) another process's commit that
    left a delivery due; marked just before each look for due rows, so nothing committed after that
    look is missed, and nothing seen by it wakes the dispatcher again."""

    def __init__(self, watch: _DataVersionWatch | None) -> None:
        self._watch = watch
        self._since = doorbell.rings

    def look(self) -> None:
        self._since = doorbell.rings
        if self._watch is not None:
            self._watch.look()

    async def wait(self, seconds: float) -> None:
        await doorbell.wait(seconds, self._since, None if self._watch is None else self._watch.news,
                            every=_WATCH_SECONDS)


@dataclass
class _Running:
    lookout: _Lookout
    client: httpx.AsyncClient


_running: _Running | None = None


@contextlib.asynccontextmanager
async def running(database: Database | None = None) -> AsyncIterator[None]:
    """What this process's dispatcher keeps between its passes, while the background jobs run.

    An idle dispatcher hears of deliveries queued by other processes' commits (a separate worker of
    the API's, one API replica of another's): on PostgreSQL through ``LISTEN``/``NOTIFY``, on SQLite
    by watching the database's ``data_version``; without this, the poll finds them. And the HTTP
    client stays open, so a destination's connection (and its TLS session) serves one pass after
    another instead of being opened again for each.
    """
    global _running
    database = database or get_database()
    settings = get_settings()
    listener: asyncio.Task[None] | None = None
    watch: _DataVersionWatch | None = None
    if database.dialect == "postgresql":
        listener = asyncio.create_task(_listen(database, max(settings.webhook_poll_interval_seconds, 1.0)),
                                       name="webhook-doorbell")
    elif (version := database.sqlite_data_version()) is not None:
        watch = _DataVersionWatch(database, version)
    client = new_client(settings)
    _running = _Running(_Lookout(watch), client)
    try:
        yield
    finally:
        _running = None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        await client.aclose()


async def deliver_webhooks() -> int:
    """The periodic job of ``bountyboard serve`` and ``bountyboard worker``.

    When nothing was left to send it waits, up to the poll interval, for the doorbell: a commit that
    queued deliveries, in this process or (within ``running``) in another one. So an event usually
    leaves within milliseconds of its commit, whichever process dispatches.
    """
    poll = get_settings().webhook_poll_interval_seconds
    kept = _running
    lookout = kept.lookout if kept is not None else _Lookout(None)
    dispatcher = Dispatcher()
    try:
        made = await dispatcher.run_pass(kept.client if kept is not None else None, lookout.look)
    except Exception:
        await asyncio.sleep(max(poll, 1.0))  # no busy loop while the database is unreachable
        raise
    if dispatcher.drained:
        await lookout.wait(poll)
    return made


async def purge_events() -> int:
    async with get_database().sessionmaker() as session:
        return await purge_expired_events(session, get_settings().event_retention_days)
