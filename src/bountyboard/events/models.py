"""The event outbox (every domain change writes its event in the same transaction) and webhooks."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.columns import StrEnumColumn
from bountyboard.crypto import WEBHOOK_SECRET, Encrypted
from bountyboard.storage.base import Base, JSONType, UTCDateTime


class MessageStatus(StrEnum):
    """Where an event stands in one endpoint's queue: due (again), delivered, or retries spent."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Event(Base):
    __tablename__ = "events"

    # The feed's position: grows in the order pollers see events, gaps allowed (see service._store).
    sequence: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                          autoincrement=False)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    type: Mapped[str] = mapped_column(String(60), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # Who may see it: the claim's bot and its operator, and the task's publisher.
    bot_id: Mapped[str | None] = mapped_column(String(40), index=True)
    operator_id: Mapped[str | None] = mapped_column(String(40), index=True)
    publisher_id: Mapped[str | None] = mapped_column(String(40), index=True)


class EventCounter(Base):
    """SQLite only: one row holding the last position handed out, under the database's write lock
    (PostgreSQL positions come from the transaction horizon, ``service.IN_TRANSACTION``)."""

    __tablename__ = "event_counter"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))


class WebhookEndpoint(Base):
    """A subscription: where to send which event kinds, and the secrets that sign them.

    Made with a user key, it receives the operator's and publisher's events (``bot_id`` is null);
    made with a bot key, it receives that bot's events.
    """

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    operator_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    bot_id: Mapped[str | None] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str] = mapped_column(String(500), default="")
    events: Mapped[list[str]] = mapped_column(JSONType)
    # Encrypted at rest (bountyboard.crypto); read and written in clear here.
    secret: Mapped[str] = mapped_column(Encrypted(WEBHOOK_SECRET))
    # During a rotation the replaced secret keeps signing until it expires.
    previous_secret: Mapped[str | None] = mapped_column(Encrypted(WEBHOOK_SECRET))
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(200))
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Last 2xx received: an endpoint whose retries run out with no success since is disabled.
    last_success_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class WebhookMessage(Base):
    """The queue: one row per (event, endpoint), written with the event, due until a 2xx is recorded."""

    __tablename__ = "webhook_messages"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_sequence"),
        Index("ix_webhook_messages_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    endpoint_id: Mapped[str] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    event_sequence: Mapped[int] = mapped_column(ForeignKey("events.sequence", ondelete="CASCADE"), index=True)
    status: Mapped[MessageStatus] = mapped_column(StrEnumColumn(MessageStatus, 12), default=MessageStatus.PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # A dispatcher holds a row while it sends it; a lease that runs out (a crash) frees the row.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_token: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class WebhookDelivery(Base):
    """One delivery attempt, as recorded after it ended (``dlv_`` ids)."""

    __tablename__ = "webhook_deliveries"

    # Insertion order, for cursor pages; ``id`` is the public identifier.
    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                     autoincrement=True)
    id: Mapped[str] = mapped_column(String(40), unique=True)
    endpoint_id: Mapped[str] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("webhook_messages.id", ondelete="CASCADE"), index=True)
    event_id: Mapped[str] = mapped_column(String(40), index=True)
    event_type: Mapped[str] = mapped_column(String(60))
    attempt: Mapped[int] = mapped_column(Integer)
    succeeded: Mapped[bool] = mapped_column(Boolean)
    status_code: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    response_excerpt: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
