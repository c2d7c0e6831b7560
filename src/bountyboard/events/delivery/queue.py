"""The delivery queue in the database: lease due rows, and record what became of them.

Plain functions of a caller's session: the dispatcher decides where its transactions begin and end.
Due rows are leased with ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's ``BEGIN
IMMEDIATE`` serialises the same short transaction). A row stays due until a 2xx is recorded; a lease
that outlives a crashed process expires, and another dispatcher sends the row again (at least once,
same ``webhook-id``). Every change to a row is made only while this dispatcher's lease still holds it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.clock import now, rfc3339
from bountyboard.config import Settings
from bountyboard.events import signing
from bountyboard.events.delivery import policy
from bountyboard.events.kinds import EventKind, WebhookEndpointDisabledData
from bountyboard.events.models import Event, MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from bountyboard.events.service import emit
from bountyboard.events.webhooks import signing_secrets
from bountyboard.ids import new_id

log = logging.getLogger("bountyboard.webhooks")

# A lease outlasts the longest attempt by this much; sending stops early enough to respect it.
LEASE_MARGIN_SECONDS = 30.0


@dataclass(frozen=True)
class Job:
    """One leased row, with everything its attempt needs."""

    message_id: int
    token: str  # the lease's
    attempt: int
    message_created_at: datetime
    endpoint_id: str
    url: str
    secrets: tuple[str, ...]
    event_id: str
    event_type: str
    body: str


@dataclass
class Outcome:
    """What became of a job: an attempt's answer, or handed back untried."""

    job: Job
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


def due(current: datetime) -> Select[int]:
    """The ids of the queue rows due at ``current`` and held by no live lease, to enabled endpoints."""
    return (
        select(WebhookMessage.id)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
        .where(WebhookMessage.status == MessageStatus.PENDING, WebhookMessage.next_attempt_at <= current,
               (WebhookMessage.lease_until.is_(None)) | (WebhookMessage.lease_until < current),
               WebhookEndpoint.enabled.is_(True))
    )


async def anything_due(session: AsyncSession) -> bool:
    """Whether a row is due now (a read: it takes no lock)."""
    return (await session.execute(due(now()).limit(1))).first() is not None


class Queue:
    """Leasing and recording, with the settings that shape them."""

    def __init__(self, settings: Settings) -> None:
        self.batch_size = settings.webhook_batch_size
        self.lease_seconds = settings.webhook_timeout_seconds + LEASE_MARGIN_SECONDS
        self.time_scale = settings.webhook_time_scale

    async def lease(self, session: AsyncSession) -> list[Job]:
        """Lease the next due rows in the session's transaction (the caller commits), in the feed's order
        (the events' positions) of what has committed: an event that commits late is sent when it does."""
        current = now()
        rows_due = (due(current).order_by(WebhookMessage.event_sequence, WebhookMessage.id).limit(self.batch_size)
                    .with_for_update(of=WebhookMessage, skip_locked=True))
        token = secrets.token_hex(16)
        ids = list((await session.execute(
            update(WebhookMessage).where(WebhookMessage.id.in_(rows_due))
            .values(lease_until=current + timedelta(seconds=self.lease_seconds), lease_token=token)
            .returning(WebhookMessage.id).execution_options(synchronize_session=False)
        )).scalars())
        if not ids:
            return []
        rows = await session.execute(
            select(WebhookMessage, Event, WebhookEndpoint)
            .join(Event, Event.sequence == WebhookMessage.event_sequence)
            .join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
            .where(WebhookMessage.id.in_(ids)).order_by(WebhookMessage.event_sequence, WebhookMessage.id)
        )
        return [
            Job(message_id=message.id, token=token, attempt=message.attempts + 1,
                message_created_at=message.created_at, endpoint_id=endpoint.id, url=endpoint.url,
                secrets=tuple(signing_secrets(endpoint)), event_id=event.id, event_type=event.type,
                body=signing.body(event.type, rfc3339(event.created_at) or "", event.data))
            for message, event, endpoint in rows
        ]

    async def record(self, session: AsyncSession, outcomes: Sequence[Outcome]) -> None:
        """These attempts, the new state of their rows and of their endpoints, in the session's
        transaction (the caller commits). A success is done; a failure is due again on the retry
        schedule (its endpoint's rows held back with it), or failed for good, and may disable its
        endpoint (``policy``); a row handed back untried is released as it was."""
        current = now()
        release: dict[str, Any] = {"lease_until": None, "lease_token": None}
        # Successes first, one statement: it also says which rows are still there and held.
        succeeded = [outcome for outcome in outcomes if outcome.sent and outcome.succeeded]
        done = await _update(session, succeeded, {
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
        _warn_taken_over(untried, await _update(session, untried, release))
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
            values: dict[str, Any] = {**release, "attempts": outcome.job.attempt}
            wait = policy.next_attempt_in(outcome.job.attempt, refused=outcome.refused,
                                          retry_after=outcome.retry_after, time_scale=self.time_scale)
            if wait is None:
                values["status"] = MessageStatus.FAILED
            else:
                values["next_attempt_at"] = current + timedelta(seconds=wait)
            paused[outcome.job.endpoint_id] = values.get("next_attempt_at", current)
            _warn_taken_over([outcome], await _update(session, [outcome], values))
            endpoint = endpoints.get(outcome.job.endpoint_id)
            if endpoint is None:
                continue
            reason = policy.disable_reason(
                status_code=outcome.status_code, refused=outcome.refused, error=outcome.error,
                exhausted=wait is None, last_success_at=endpoint.last_success_at,
                message_created_at=outcome.job.message_created_at)
            if reason is not None:
                await _disable(session, endpoint, reason, current)
        for endpoint_id, due_again in paused.items():
            held_back = [o for o in kept if o.held_back and o.job.endpoint_id == endpoint_id]
            _warn_taken_over(held_back, await _update(session, held_back, {**release, "next_attempt_at": due_again}))


async def _update(session: AsyncSession, outcomes: Sequence[Outcome], values: dict[str, Any]) -> set[int]:
    """Change rows this dispatcher still holds (a lease that ran out may have passed them on); the ids
    of the rows changed."""
    if not outcomes:
        return set()
    ids = [outcome.job.message_id for outcome in outcomes]
    held = WebhookMessage.id.in_(ids) & (WebhookMessage.lease_token == outcomes[0].job.token)
    result = await session.execute(
        update(WebhookMessage).where(held).values(**values).returning(WebhookMessage.id)
        .execution_options(synchronize_session=False)
    )
    return set(result.scalars())


def _warn_taken_over(outcomes: Sequence[Outcome], changed: set[int]) -> None:
    lost = sum(1 for outcome in outcomes if outcome.job.message_id not in changed)
    if lost:
        log.warning("%d of %d deliveries were taken over after their lease ran out; their attempts are "
                    "recorded, their state is left to the new holder", lost, len(outcomes))


async def _disable(session: AsyncSession, endpoint: WebhookEndpoint, reason: str, current: datetime) -> None:
    if not endpoint.enabled:
        return
    endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at = False, reason, current
    endpoint.updated_at = current
    log.warning("webhook %s disabled: %s", endpoint.id, reason)
    await emit(session, EventKind.WEBHOOK_ENDPOINT_DISABLED,
               WebhookEndpointDisabledData(webhookId=endpoint.id, url=endpoint.url, reason=reason,
                                           disabledAt=rfc3339(current)),
               bot_id=endpoint.bot_id, operator_id=endpoint.operator_id)
