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
import email.utils
import logging
import random
import secrets
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import certifi
import httpx
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import __version__
from bountyboard.clock import now, rfc3339
from bountyboard.config import Settings, get_settings
from bountyboard.db import Database, get_database
from bountyboard.events import signing
from bountyboard.events.destinations import DestinationRefused, PrivateDestination, vet
from bountyboard.events.kinds import WebhookEndpointDisabledData
from bountyboard.events.models import Event, MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from bountyboard.events.service import doorbell, emit, purge_expired_events
from bountyboard.events.transport import pinned, webhook_client
from bountyboard.events.webhooks import signing_secrets
from bountyboard.ids import new_id

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

    async def run_pass(self) -> int:
        """Send due deliveries until none is left or the pass has run its time; the attempts made."""
        deadline = time.monotonic() + _PASS_SECONDS
        made = 0
        client: httpx.AsyncClient | None = None
        try:
            while True:
                jobs = await self._take()
                if not jobs:
                    break
                if client is None:
                    client = webhook_client(_tls_context(), self.settings.webhook_timeout_seconds,
                                            self.settings.webhook_concurrency * 2,
                                            {"user-agent": f"bountyboard-webhooks/{__version__}"})
                outcomes = await self._send_all(client, jobs)
                await self._record([outcome for outcome in outcomes if not outcome.recorded])
                made += sum(1 for outcome in outcomes if outcome.sent)
                if time.monotonic() > deadline:
                    break
        finally:
            if client is not None:
                await client.aclose()
        return made

    async def _take(self) -> list[_Job]:
        async with self.database.sessionmaker() as session:
            current = now()
            due = (
                select(WebhookMessage.id)
                .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
                .where(WebhookMessage.status == MessageStatus.PENDING, WebhookMessage.next_attempt_at <= current,
                       (WebhookMessage.lease_until.is_(None)) | (WebhookMessage.lease_until < current),
                       WebhookEndpoint.enabled.is_(True))
                .order_by(WebhookMessage.id).limit(self.settings.webhook_batch_size)
                .with_for_update(of=WebhookMessage, skip_locked=True)
            )
            ids = list((await session.execute(due)).scalars())
            if not ids:
                await session.rollback()
                return []
            token = secrets.token_hex(16)
            await session.execute(
                update(WebhookMessage).where(WebhookMessage.id.in_(ids))
                .values(lease_until=current + timedelta(seconds=self.lease_seconds), lease_token=token)
                .execution_options(synchronize_session=False)
            )
            rows = await session.execute(
                select(WebhookMessage, Event, WebhookEndpoint)
                .join(Event, Event.sequence == WebhookMessage.event_sequence)
                .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
                .where(WebhookMessage.id.in_(ids)).order_by(WebhookMessage.id)
            )
            jobs = [
                _Job(message_id=message.id, token=token, attempt=message.attempts + 1,
                     message_created_at=message.created_at, endpoint_id=endpoint.id, url=endpoint.url,
                     secrets=tuple(signing_secrets(endpoint)), event_id=event.id, event_type=event.type,
                     body=signing.body(event.type, rfc3339(event.created_at) or "", event.data))
                for message, event, endpoint in rows
            ]
            await session.commit()
            return jobs

    async def _send_all(self, client: httpx.AsyncClient, jobs: Sequence[_Job]) -> list[_Outcome]:
        by_endpoint: dict[str, list[_Job]] = {}
        for job in jobs:
            by_endpoint.setdefault(job.endpoint_id, []).append(job)
        gate = asyncio.Semaphore(self.settings.webhook_concurrency)
        successes = _SuccessRecorder(self._record)
        # Stop starting attempts once one could outlive the lease taken a moment ago.
        cutoff = time.monotonic() + self.lease_seconds - self.settings.webhook_timeout_seconds - 5.0

        async def one_endpoint(queue: list[_Job]) -> list[_Outcome]:
            outcomes: list[_Outcome] = []
            async with gate:
                for job in queue:
                    if outcomes and not outcomes[-1].succeeded:
                        outcomes.append(_Outcome(job, sent=False, held_back=True))
                    elif time.monotonic() > cutoff:
                        outcomes.append(_Outcome(job, sent=False))
                    else:
                        outcomes.append(await self._send(client, job))
                        if outcomes[-1].succeeded:
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

    async def _record(self, outcomes: Sequence[_Outcome]) -> None:
        """These attempts, and the new state of their rows, in one transaction."""
        if not outcomes:
            return
        async with self.database.sessionmaker() as session:
            current = now()
            endpoint_ids = sorted({outcome.job.endpoint_id for outcome in outcomes if outcome.sent})
            endpoints = {endpoint.id: endpoint for endpoint in (await session.execute(
                select(WebhookEndpoint).where(WebhookEndpoint.id.in_(endpoint_ids)).order_by(WebhookEndpoint.id)
            )).scalars()}
            # A subscription deleted meanwhile took its queue rows along; its attempts are not kept.
            existing = set((await session.execute(select(WebhookMessage.id).where(
                WebhookMessage.id.in_([outcome.job.message_id for outcome in outcomes])))).scalars())
            kept = [outcome for outcome in outcomes if outcome.job.message_id in existing]
            attempted = [outcome for outcome in kept if outcome.sent]
            session.add_all(WebhookDelivery(
                id=new_id("dlv"), endpoint_id=o.job.endpoint_id, message_id=o.job.message_id, event_id=o.job.event_id,
                event_type=o.job.event_type, attempt=o.job.attempt, succeeded=o.succeeded, status_code=o.status_code,
                latency_ms=o.latency_ms, response_excerpt=o.excerpt, error=o.error, created_at=current,
            ) for o in attempted)
            release: dict[str, Any] = {"lease_until": None, "lease_token": None}
            await self._update(session, [o for o in kept if not o.sent and not o.held_back], release)
            await self._update(session, [o for o in attempted if o.succeeded], {
                **release, "status": MessageStatus.SUCCEEDED, "delivered_at": current,
                "attempts": WebhookMessage.attempts + 1})
            paused: dict[str, datetime] = {}  # endpoint -> when its failed row is due again
            for outcome in attempted:
                exhausted = False
                if not outcome.succeeded:
                    values: dict[str, Any] = {**release, "attempts": outcome.job.attempt}
                    delay = None if outcome.refused else retry_delay(outcome.job.attempt,
                                                                     self.settings.webhook_time_scale)
                    if delay is None:
                        exhausted = True
                        values["status"] = MessageStatus.FAILED
                    else:
                        wait = max(delay, outcome.retry_after or 0.0)
                        values["next_attempt_at"] = current + timedelta(seconds=wait)
                    paused[outcome.job.endpoint_id] = values.get("next_attempt_at", current)
                    await self._update(session, [outcome], values)
                endpoint = endpoints.get(outcome.job.endpoint_id)
                if endpoint is not None:
                    await self._judge_endpoint(session, endpoint, outcome, exhausted, current)
            for endpoint_id, due in paused.items():
                await self._update(session, [o for o in kept if o.held_back and o.job.endpoint_id == endpoint_id],
                                   {**release, "next_attempt_at": due})
            await session.commit()

    @staticmethod
    async def _update(session: AsyncSession, outcomes: Sequence[_Outcome], values: dict[str, Any]) -> None:
        """Change rows this dispatcher still holds (a lease that ran out may have passed them on)."""
        if not outcomes:
            return
        ids = [outcome.job.message_id for outcome in outcomes]
        held = WebhookMessage.id.in_(ids) & (WebhookMessage.lease_token == outcomes[0].job.token)
        result = await session.execute(
            update(WebhookMessage).where(held).values(**values).execution_options(synchronize_session=False)
        )
        changed = getattr(result, "rowcount", len(ids))
        if changed < len(ids):
            log.warning("%d of %d deliveries were taken over after their lease ran out; their attempts are "
                        "recorded, their state is left to the new holder", len(ids) - changed, len(ids))

    async def _judge_endpoint(self, session: AsyncSession, endpoint: WebhookEndpoint, outcome: _Outcome,
                              exhausted: bool, current: datetime) -> None:
        if outcome.succeeded:
            endpoint.last_success_at = current
        elif outcome.status_code == 410:
            await _disable(session, endpoint, "The endpoint answered 410 Gone.", current)
        elif outcome.refused:
            await _disable(session, endpoint, (outcome.error or "The destination is refused.")[:200], current)
        elif exhausted and (endpoint.last_success_at is None
                            or endpoint.last_success_at < outcome.job.message_created_at):
            await _disable(session, endpoint, f"Every attempt failed for {MAX_ATTEMPTS} attempts over the whole "
                                              "retry schedule, with no successful delivery meanwhile.", current)


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

    def __init__(self, record: Callable[[Sequence[_Outcome]], Awaitable[None]]) -> None:
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


async def deliver_webhooks() -> int:
    """The periodic job of ``bountyboard serve`` and ``bountyboard worker``.

    When there was nothing to send it waits, up to the poll interval, for a local commit of new
    events, so that in ``serve`` an event usually leaves within milliseconds of its commit.
    """
    poll = get_settings().webhook_poll_interval_seconds
    try:
        made = await Dispatcher().run_pass()
    except Exception:
        await asyncio.sleep(max(poll, 1.0))  # no busy loop while the database is unreachable
        raise
    if not made:
        await doorbell.wait(poll)
    return made


async def purge_events() -> int:
    async with get_database().sessionmaker() as session:
        return await purge_expired_events(session, get_settings().event_retention_days)
