"""Webhook subscriptions: create, change, rotate, test, inspect attempts and redeliver.

Plain functions over a session, used by the API routes and the site alike. Each writer commits.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, conflict, invalid, not_found
from bountyboard.events import audiences, signing
from bountyboard.events.destinations import DestinationRefused, check_new_destination
from bountyboard.events.kinds import OPERATOR_KINDS, EventKind, WebhookTestData
from bountyboard.events.models import Event, MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from bountyboard.events.service import Owner, emit, owned_endpoints, queue_messages
from bountyboard.ids import new_id

MAX_ENDPOINTS_PER_OWNER = 20
ROTATION_OVERLAP = timedelta(hours=24)


async def _checked_events(session: AsyncSession, events: list[str], operator_id: str, bot_id: str | None) -> list[str]:
    allowed = await audiences.subscribable(session, operator_id, bot_id)
    refused = [kind for kind in events if kind not in allowed]
    if refused:
        who = ("Subscriptions made with a bot key may name only" if bot_id is not None
               else "Subscriptions made with a user key of an operator may name only" if allowed == OPERATOR_KINDS
               else "Subscriptions made with a publisher's or reviewer's user key may name only")
        raise invalid(
            f"{who} {', '.join(allowed)}; not allowed: {', '.join(refused)}.",
            errors=[{"field": "events", "message": f"{kind} is not subscribable here"} for kind in refused],
            code=ErrorCode.EVENT_NOT_SUBSCRIBABLE,
        )
    return list(dict.fromkeys(events))


async def _checked_url(url: str) -> str:
    try:
        await check_new_destination(url, allow_private=get_settings().webhook_allow_private)
    except DestinationRefused as exc:
        raise invalid(str(exc), errors=[{"field": "url", "message": str(exc)}],
                      code=ErrorCode.INVALID_WEBHOOK_URL) from exc
    return url


async def list_endpoints(session: AsyncSession, owner: Owner) -> list[WebhookEndpoint]:
    query = select(WebhookEndpoint).where(owned_endpoints(owner)).order_by(WebhookEndpoint.created_at,
                                                                           WebhookEndpoint.id)
    return list((await session.execute(query)).scalars())


async def get_endpoint(session: AsyncSession, owner: Owner, endpoint_id: str) -> WebhookEndpoint:
    endpoint = (await session.execute(
        select(WebhookEndpoint).where(WebhookEndpoint.id == endpoint_id, owned_endpoints(owner))
    )).scalar_one_or_none()
    if endpoint is None:
        raise not_found("webhook", endpoint_id)
    return endpoint


async def create_endpoint(session: AsyncSession, owner: Owner, url: str, events: list[str],
                          description: str = "") -> WebhookEndpoint:
    """A new subscription; its ``secret`` is readable on the returned object (show it once)."""
    kinds = await _checked_events(session, events, owner.operator_id, owner.bot_id)
    await _checked_url(url)
    count = await session.scalar(select(func.count()).select_from(WebhookEndpoint).where(owned_endpoints(owner)))
    if (count or 0) >= MAX_ENDPOINTS_PER_OWNER:
        raise conflict(ErrorCode.WEBHOOK_LIMIT_REACHED,
                       f"At most {MAX_ENDPOINTS_PER_OWNER} webhook subscriptions per owner; delete one first.")
    current = now()
    endpoint = WebhookEndpoint(
        id=new_id("whk"), operator_id=owner.operator_id, bot_id=owner.bot_id, url=url, description=description,
        events=kinds, secret=signing.new_secret(), enabled=True, created_at=current, updated_at=current,
    )
    session.add(endpoint)
    await session.flush()
    return endpoint


async def update_endpoint(session: AsyncSession, owner: Owner, endpoint_id: str, *, url: str | None = None,
                          events: list[str] | None = None, description: str | None = None,
                          enabled: bool | None = None) -> WebhookEndpoint:
    endpoint = await get_endpoint(session, owner, endpoint_id)
    if events is not None:
        endpoint.events = await _checked_events(session, events, endpoint.operator_id, endpoint.bot_id)
    if url is not None:
        endpoint.url = await _checked_url(url)
    if description is not None:
        endpoint.description = description
    if enabled is True and not endpoint.enabled:
        # Deliveries that waited while it was disabled resume; their schedule starts afresh.
        endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at = True, None, None
    elif enabled is False and endpoint.enabled:
        endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at = False, "Disabled by its owner.", now()
    endpoint.updated_at = now()
    await session.flush()
    return endpoint


async def delete_endpoint(session: AsyncSession, owner: Owner, endpoint_id: str) -> WebhookEndpoint:
    endpoint = await get_endpoint(session, owner, endpoint_id)
    await session.delete(endpoint)
    await session.flush()
    return endpoint


async def rotate_secret(session: AsyncSession, owner: Owner, endpoint_id: str) -> WebhookEndpoint:
    """A new secret; the replaced one keeps signing alongside it for 24 hours."""
    endpoint = await get_endpoint(session, owner, endpoint_id)
    current = now()
    endpoint.previous_secret, endpoint.previous_secret_expires_at = endpoint.secret, current + ROTATION_OVERLAP
    endpoint.secret = signing.new_secret()
    endpoint.updated_at = current
    await session.flush()
    return endpoint


async def reencrypt_secrets(session: AsyncSession) -> int:
    """Write every stored signing secret again, so it is encrypted under the current server secret
    (after a rotation, while the previous secret still reads the old tokens). The subscriptions seen."""
    endpoints = list((await session.execute(select(WebhookEndpoint).order_by(WebhookEndpoint.id))).scalars())
    for endpoint in endpoints:
        flag_modified(endpoint, "secret")
        flag_modified(endpoint, "previous_secret")
    await session.flush()
    return len(endpoints)


def signing_secrets(endpoint: WebhookEndpoint) -> list[str]:
    """The secrets that sign the next attempt: the current one, and the replaced one during the overlap."""
    secrets = [endpoint.secret]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires is not None and expires > now():
        secrets.append(endpoint.previous_secret)
    return secrets


async def send_test_event(session: AsyncSession, owner: Owner, endpoint_id: str) -> Event:
    """A ``webhook.test`` event queued for this endpoint only."""
    endpoint = await get_endpoint(session, owner, endpoint_id)
    if not endpoint.enabled:
        raise conflict(ErrorCode.WEBHOOK_DISABLED, "The webhook is disabled; enable it (PATCH enabled=true) first.")
    event = await emit(session, EventKind.WEBHOOK_TEST, WebhookTestData(webhookId=endpoint.id, url=endpoint.url),
                       bot_id=endpoint.bot_id, operator_id=endpoint.operator_id)
    await queue_messages(session, [endpoint.id], event)
    await session.flush()
    return event


async def list_attempts(session: AsyncSession, owner: Owner, endpoint_id: str, *, before: int | None = None,
                        limit: int = 50, event_id: str | None = None) -> tuple[list[WebhookDelivery], bool]:
    """Delivery attempts of an endpoint, newest first (cursor: the ``seq`` of the last one seen)."""
    endpoint = await get_endpoint(session, owner, endpoint_id)
    query = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)
    if before is not None:
        query = query.where(WebhookDelivery.seq < before)
    if event_id is not None:
        query = query.where(WebhookDelivery.event_id == event_id)
    rows = list((await session.execute(query.order_by(WebhookDelivery.seq.desc()).limit(limit + 1))).scalars())
    return rows[:limit], len(rows) > limit


async def redeliver(session: AsyncSession, owner: Owner, endpoint_id: str,
                    delivery_id: str) -> tuple[WebhookMessage, str]:
    """Queue the attempt's event for this endpoint again, due now, with a fresh retry schedule."""
    endpoint = await get_endpoint(session, owner, endpoint_id)
    attempt = (await session.execute(
        select(WebhookDelivery).where(WebhookDelivery.id == delivery_id, WebhookDelivery.endpoint_id == endpoint.id)
    )).scalar_one_or_none()
    if attempt is None:
        raise not_found("delivery", delivery_id)
    if not endpoint.enabled:
        raise conflict(ErrorCode.WEBHOOK_DISABLED, "The webhook is disabled; enable it (PATCH enabled=true) first.")
    message = await session.get(WebhookMessage, attempt.message_id, with_for_update=True)
    if message is None:
        raise not_found("delivery", delivery_id)
    message.status, message.attempts, message.next_attempt_at = MessageStatus.PENDING, 0, now()
    await session.flush()
    return message, attempt.event_id
