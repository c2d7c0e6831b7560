"""Writing events, fanning them out to webhook subscriptions, the polling feed and retention.

Every function works on a caller's ``AsyncSession`` so routers, the site and background jobs share
one implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Table,
    Text,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal_column,
    or_,
    select,
)
from sqlalchemy import cast as cast_
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.clock import now
from bountyboard.events import audiences
from bountyboard.events.doorbell import PROCESS_TOKEN, WEBHOOKS_CHANNEL, doorbell
from bountyboard.events.kinds import MODELS, EventData, EventKind
from bountyboard.events.models import Event, EventCounter, MessageStatus, WebhookEndpoint, WebhookMessage
from bountyboard.ids import new_id
from bountyboard.storage.unit_of_work import after_commit, core


@dataclass(frozen=True)
class Owner:
    """Whose events and webhooks: an operator (``bot_id`` None) or one of the operator's bots."""

    operator_id: str
    bot_id: str | None = None

    @classmethod
    def of(cls, actor: Any) -> Owner:
        """The owner an authenticated ``Actor`` (bot key or user key) speaks for."""
        return cls(operator_id=actor.user_id, bot_id=actor.bot_id)


# The statements of every event, built once: an event is written by most writing requests, and building
# a statement costs more than SQLite takes to run it.
_EVENTS = cast(Table, Event.__table__)
# SQLite: the single writer's own order. The event takes the position after the counter's, and a trigger
# moves the counter on (migration 0025), in one statement under the database's write lock, which every
# writer holds anyway until its commit: positions commit in order and a purge never reuses one.
_COUNTER = cast(Table, EventCounter.__table__)
_INSERT_COUNTED_EVENT = (insert(_EVENTS)  # Core: a row written once needs no unit of work
                         .values(sequence=select(_COUNTER.c.value + 1).where(_COUNTER.c.id == 1).scalar_subquery())
                         .returning(_EVENTS.c.sequence))
# PostgreSQL: the transaction horizon, no shared row. An event's position is its transaction's id times
# ``IN_TRANSACTION`` plus its rank within that transaction (the transaction's own rows alone fall in its
# range, so the rank is read without a lock), and a poller reads only below the oldest transaction of this
# database still running (``horizon``): none below it can commit later, none at or above it is passed.
IN_TRANSACTION = 2**20
_XACT_BASE = (cast_(cast_(func.pg_current_xact_id(), Text), BigInteger) * IN_TRANSACTION).label("base")
_OWN = select(_XACT_BASE).cte("own")
_RANK = select(func.max(_EVENTS.c.sequence) + 1).where(
    _EVENTS.c.sequence >= _OWN.c.base, _EVENTS.c.sequence < _OWN.c.base + IN_TRANSACTION).scalar_subquery()
_INSERT_POSITIONED_EVENT = insert(_EVENTS).from_select(
    [column.key for column in _EVENTS.columns],
    # Past 2**20 events in one transaction the last position repeats: the insert fails, never misorders.
    select(*(func.least(func.coalesce(_RANK, _OWN.c.base), _OWN.c.base + IN_TRANSACTION - 1)
             if column.key == "sequence"
             else bindparam(f"event_{column.key}", type_=column.type) for column in _EVENTS.columns)),
).returning(_EVENTS.c.sequence)


# The oldest transaction still running in this database, or the snapshot's end if none is: the snapshot's
# running transactions less those that ``pg_stat_activity`` shows in another database (they cannot write
# here). One it cannot place (ended since the snapshot, prepared, hidden from this role) counts as this
# database's, so the horizon is never later than the truth, only sometimes earlier.
_HORIZON_XACT = literal_column("""(SELECT coalesce(
    (SELECT min(x::text::bigint) FROM pg_snapshot_xip(s.snap) AS x WHERE xid(x) NOT IN (
        SELECT a.backend_xid FROM pg_stat_get_activity(NULL) AS a WHERE a.backend_xid IS NOT NULL
        AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))),
    pg_snapshot_xmax(s.snap)::text::bigint) FROM (SELECT pg_current_snapshot() AS snap) AS s)""", BigInteger)


def horizon() -> Any:
    """PostgreSQL: the lowest position a transaction still running may yet commit (none below it can)."""
    return _HORIZON_XACT * IN_TRANSACTION


_SUBSCRIBERS = (
    select(WebhookEndpoint.id, WebhookEndpoint.events)
    .where(WebhookEndpoint.enabled.is_(True),
           or_(WebhookEndpoint.bot_id == bindparam("bot_id"),
               and_(WebhookEndpoint.bot_id.is_(None),
                    WebhookEndpoint.operator_id.in_(bindparam("users", expanding=True)))))
    .order_by(WebhookEndpoint.id)
)
_INSERT_MESSAGES = insert(cast(Table, WebhookMessage.__table__))
_NOTIFY = select(func.pg_notify(WEBHOOKS_CHANNEL, PROCESS_TOKEN))


async def _store(session: AsyncSession, event: Event) -> None:
    """Give the event its position and store it, so that a poller reading "after N" never misses an
    event that commits later with a lower position, nor sees one twice (see ``IN_TRANSACTION``)."""
    if session.get_bind().dialect.name == "postgresql":
        values = {f"event_{column.key}": getattr(event, column.key) for column in _EVENTS.columns
                  if column.key != "sequence"}
        event.sequence = int((await core(session, _INSERT_POSITIONED_EVENT, values)).scalar_one())
        return
    values = {column.key: getattr(event, column.key) for column in _EVENTS.columns if column.key != "sequence"}
    event.sequence = int((await core(session, _INSERT_COUNTED_EVENT, values)).scalar_one())


async def _will_queue(session: AsyncSession) -> None:
    """This transaction queues deliveries: its commit (the unit of work's one commit point) rings this
    process's doorbell and, on PostgreSQL, other processes' (a ``NOTIFY`` is delivered when, and only if,
    its transaction commits)."""
    if not after_commit(session, doorbell.ring):
        return  # asked already in this transaction
    if session.get_bind().dialect.name == "postgresql":
        await core(session, _NOTIFY)


async def queue_messages(session: AsyncSession, endpoint_ids: list[str], event: Event) -> None:
    """Put one event in these endpoints' delivery queues, due at once (the caller's transaction), and
    ring the dispatchers' doorbells when that transaction commits."""
    if not endpoint_ids:
        return
    await _will_queue(session)
    await core(session, _INSERT_MESSAGES, [
        {"endpoint_id": endpoint_id, "event_sequence": event.sequence, "status": MessageStatus.PENDING,
         "attempts": 0, "next_attempt_at": event.created_at, "created_at": event.created_at}
        for endpoint_id in endpoint_ids])


async def _subscribers(session: AsyncSession, type: str, bot_id: str | None, operator_id: str | None,
                       publisher_id: str | None) -> list[str]:
    """The enabled endpoints that asked for ``type`` and may see an event of these owners: the bot's
    own, and the operator's and the publisher's that belong to no bot (the review side: ``audiences``)."""
    if type in audiences.REVIEW_SIDE:
        return await audiences.review_side_subscribers(session, type, bot_id, operator_id, publisher_id)
    users = sorted({user for user in (operator_id, publisher_id) if user})
    if not bot_id and not users:
        return []
    rows = await core(session, _SUBSCRIBERS, {"bot_id": bot_id, "users": users})
    return [endpoint_id for endpoint_id, kinds in rows if type in kinds]


async def emit(
    session: AsyncSession,
    kind: EventKind,
    data: EventData,
    *,
    bot_id: str | None = None,
    operator_id: str | None = None,
    publisher_id: str | None = None,
) -> Event:
    """Record an event of ``kind`` with ``data``, one of its ``MODELS``, inside the caller's transaction (the
    caller commits).

    The same transaction queues one webhook delivery per enabled subscription that asked for this
    kind and may see the event, so an event is never stored without its deliveries or the reverse.
    """
    if type(data) not in MODELS[kind]:
        raise TypeError(f"{type(data).__name__} is not a payload of {kind.value}")
    return await record(session, kind.value, data.model_dump(mode="json"), bot_id=bot_id, operator_id=operator_id,
                        publisher_id=publisher_id)


async def record(
    session: AsyncSession,
    type: str,
    data: dict[str, Any],
    *,
    bot_id: str | None = None,
    operator_id: str | None = None,
    publisher_id: str | None = None,
) -> Event:
    """``emit()`` with an untyped payload: only for the test-only event bursts, whose data is free."""
    if session.new or session.dirty or session.deleted:  # the flow's changes are written before its event
        await session.flush()
    endpoints = await _subscribers(session, type, bot_id, operator_id, publisher_id)
    if endpoints:
        await _will_queue(session)
    event = Event(id=new_id("evt"), type=type, created_at=now(), data=data, bot_id=bot_id, operator_id=operator_id,
                  publisher_id=publisher_id)
    await _store(session, event)
    await queue_messages(session, endpoints, event)
    return event


def _visible_to(owner: Owner) -> Any:
    if owner.bot_id is not None:
        return Event.bot_id == owner.bot_id
    return or_(Event.operator_id == owner.operator_id, Event.publisher_id == owner.operator_id)


def owned_endpoints(owner: Owner) -> Any:
    """The endpoints an owner manages: a bot its own; an operator its own and its bots'."""
    if owner.bot_id is not None:
        return WebhookEndpoint.bot_id == owner.bot_id
    return WebhookEndpoint.operator_id == owner.operator_id


async def list_events(
    session: AsyncSession,
    owner: Owner,
    *,
    after: int = 0,
    types: list[str] | None = None,
    limit: int = 50,
    delivery_failed: bool = False,
) -> tuple[list[Event], bool]:
    """Events the owner may see with ``sequence > after``, oldest first; and whether more follow. On
    PostgreSQL only those below the horizon: a later page then finds every event that commits late."""
    query = select(Event).where(Event.sequence > after, _visible_to(owner))
    if session.get_bind().dialect.name == "postgresql":
        query = query.where(Event.sequence < horizon())
    if types:
        query = query.where(Event.type.in_(types))
    if delivery_failed:
        # Some delivery to one of the owner's endpoints has failed and none has succeeded since.
        query = query.where(exists(
            select(WebhookMessage.id).join(WebhookEndpoint, WebhookEndpoint.id == WebhookMessage.endpoint_id)
            .where(WebhookMessage.event_sequence == Event.sequence, WebhookMessage.status != MessageStatus.SUCCEEDED,
                   WebhookMessage.attempts > 0, owned_endpoints(owner))
        ))
    rows = list((await session.execute(query.order_by(Event.sequence).limit(limit + 1))).scalars())
    return rows[:limit], len(rows) > limit


async def purge_expired_events(session: AsyncSession, retention_days: int) -> int:
    """Delete events older than the retention period, with their queued deliveries and attempts."""
    cutoff = now() - timedelta(days=retention_days)
    result = await session.execute(delete(Event).where(Event.created_at < cutoff))
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)
