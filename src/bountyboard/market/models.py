"""Tables of the marketplace: tasks, claims, submissions and appeals."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.columns import StrEnumColumn
from bountyboard.storage.base import Base, JSONType, UTCDateTime

Cents = BigInteger().with_variant(Integer, "sqlite")


class TaskStatus(StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class ClaimStatus(StrEnum):
    ACTIVE = "active"
    SUBMITTED = "submitted"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    RELEASED = "released"
    EXPIRED = "expired"


class ReviewState(StrEnum):
    NOT_SUBMITTED = "not_submitted"
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    APPEALED = "appealed"
    APPEAL_UPHELD = "appeal_upheld"
    APPEAL_DENIED = "appeal_denied"



class AppealStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


OPEN_TASK_STATUSES = (TaskStatus.PUBLISHED, TaskStatus.IN_PROGRESS)


class Task(Base):
    __tablename__ = "tasks"
    # The board and the publisher's list page in these orders; the indexes let them read only a page.
    __table_args__ = (
        Index("ix_tasks_status_published", "status", "published_at", "id"),
        Index("ix_tasks_module_status_published", "module", "status", "published_at", "id"),
        Index("ix_tasks_publisher_created", "publisher_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    publisher_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    module: Mapped[str] = mapped_column(String(20), index=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[TaskStatus] = mapped_column(StrEnumColumn(TaskStatus, 20), index=True)
    # The bounty in cents: what the publisher escrows on publish, plus donations (donate module).
    bounty_cents: Mapped[int] = mapped_column(Cents, default=0)
    max_claims: Mapped[int] = mapped_column(Integer, default=1)
    # Claims holding a slot now (kept by the lifecycle under the task's row lock).
    slots_taken: Mapped[int] = mapped_column(Integer, default=0)
    claim_ttl_seconds: Mapped[int] = mapped_column(Integer)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    deliverables: Mapped[list[str]] = mapped_column(JSONType, default=list)
    repository_url: Mapped[str | None] = mapped_column(String(500))
    source_language: Mapped[str | None] = mapped_column(String(35))
    target_language: Mapped[str | None] = mapped_column(String(35))
    rubric: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    target_claim_id: Mapped[str | None] = mapped_column(String(40), index=True)
    # Arena: shares of the bounty per rank, in basis points adding up to 10000.
    payout_split: Mapped[list[int] | None] = mapped_column(JSONType)
    # Checks before review (DESIGN.md section 13, migration 0020): the publisher's rules and verifier.
    checks: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Moved by the database at every UPDATE of the row (migration 0016), so a loaded task's value may be
    # behind after a flush: the ETags read it fresh (market.listing).
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # Review deadline (DESIGN.md section 14, market.deadlines): null hours read as the module's default.
    review_within_hours: Mapped[float | None] = mapped_column(Float)
    on_review_timeout: Mapped[str] = mapped_column(String(10), default="accept", server_default="accept")

    # Fair dealing (DESIGN.md section 14, migration 0022): who may claim, and what a claim puts up.
    min_reputation: Mapped[float | None] = mapped_column(Float)  # on the lower end of the interval
    min_completed: Mapped[int | None] = mapped_column(Integer)
    claim_bond_cents: Mapped[int] = mapped_column(Cents, default=0, server_default="0")


class Claim(Base):
    __tablename__ = "claims"
    # A task's holders and a holder's active claims, which every claim asks for (migration 0010).
    __table_args__ = (
        Index("ix_claims_task_holding", "task_id", "holds_slot"),
        Index("ix_claims_bot_status", "bot_id", "status", "expires_at"),
        Index("ix_claims_operator_status", "operator_id", "status", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"))
    bot_id: Mapped[str | None] = mapped_column(ForeignKey("bots.id"))
    operator_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    status: Mapped[ClaimStatus] = mapped_column(StrEnumColumn(ClaimStatus, 20), index=True)
    review_state: Mapped[ReviewState] = mapped_column(StrEnumColumn(ReviewState, 20))
    holds_slot: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    reviewer_id: Mapped[str | None] = mapped_column(String(40))
    review_comment: Mapped[str | None] = mapped_column(Text)
    score: Mapped[float | None] = mapped_column(Float)
    deliverable_ticks: Mapped[list[bool] | None] = mapped_column(JSONType)
    appeal_deadline: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    rank: Mapped[int | None] = mapped_column(Integer)
    payout_cents: Mapped[int] = mapped_column(Cents, default=0)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Review deadline (market.deadlines): due and warning times set at submission, the warning time
    # cleared once review.due is emitted; who decided (reviewer or deadline); when it went to admins.
    review_due_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    review_warn_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    decided_by: Mapped[str | None] = mapped_column(String(20))
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)

    # The claim bond (market.bonds): what the claim holds in ``bond:<id>``, and held | returned | forfeited.
    bond_cents: Mapped[int] = mapped_column(Cents, default=0, server_default="0")
    bond_state: Mapped[str | None] = mapped_column(String(20))


class _OfClaim:
    """A row of a claim (its submissions, its appeal), kept beside the claim's task."""

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class Submission(_OfClaim, Base):
    """A claim's submissions: one, unless a binding check sent it back (each retry is the next
    ``attempt``; unique per claim and attempt, whatever the concurrency)."""

    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("claim_id", "attempt", name="uq_submissions_claim_attempt"),)

    claim_id: Mapped[str] = mapped_column(ForeignKey("claims.id"), index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=1, server_default="1")

    result_type: Mapped[str] = mapped_column(String(20))
    content: Mapped[str | None] = mapped_column(Text)
    attachments: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    content_sha256: Mapped[str] = mapped_column(String(64))
    # Hash of the whole body: a retry with the same body gets the same receipt.
    fingerprint: Mapped[str] = mapped_column(String(64))


class Appeal(_OfClaim, Base):
    __tablename__ = "appeals"

    # Unique: recorded once per claim, whatever the concurrency.
    claim_id: Mapped[str] = mapped_column(ForeignKey("claims.id"), unique=True)

    opened_by: Mapped[str] = mapped_column(String(40))
    reason: Mapped[str] = mapped_column(Text)
    evidence_urls: Mapped[list[str]] = mapped_column(JSONType, default=list)
    status: Mapped[AppealStatus] = mapped_column(StrEnumColumn(AppealStatus, 20), index=True)
    outcome: Mapped[str | None] = mapped_column(String(20))
    comment: Mapped[str | None] = mapped_column(Text)
    resolver_id: Mapped[str | None] = mapped_column(String(40))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Unresolved past its own window (appeal_resolve_window_seconds): only admins resolve it now.
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
