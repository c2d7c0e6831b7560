"""Review deadlines (DESIGN.md section 14; docs/lifecycle.md, "Review deadlines").

A submission's review falls due ``reviewWithinHours`` after it is submitted (the module's default
unless the publisher set it within the settings' bounds). ``review.due`` is emitted once, at the
warning point (``review_due_warning_seconds`` before the deadline, at most half the window). At the
deadline, the sweep accepts and pays the submission (``onReviewTimeout: accept``, recorded
``decidedBy: deadline``) or hands it to the admins (``escalate``; arenas always escalate, since an
arena's acceptance needs a score). An appeal left unresolved past ``appeal_resolve_window_seconds``
goes to the admins too. Everything here runs under the task's row lock, so it happens once.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.clock import rfc3339
from bountyboard.config import get_settings
from bountyboard.events.kinds import EventKind, ReviewDueData
from bountyboard.events.service import emit
from bountyboard.market.locks import locking
from bountyboard.market.models import (
    OPEN_TASK_STATUSES,
    Appeal,
    AppealStatus,
    Claim,
    ClaimStatus,
    Submission,
    Task,
    TaskStatus,
)
from bountyboard.market.modules import Module
from bountyboard.market.review import accept_by_deadline
from bountyboard.market.slots import visibility

ACCEPT, ESCALATE = "accept", "escalate"
# Hours a reviewer has by default, per module (a publisher may set reviewWithinHours within the bounds).
MODULE_REVIEW_HOURS: dict[Module, float] = {
    Module.FUN: 48, Module.ARENA: 72, Module.EXCHANGE: 72, Module.CREW: 120, Module.DONATE: 72,
    Module.TRANSLATE: 72, Module.JUDGE: 48, Module.SHOW: 72,
}


def review_hours(task: Task) -> float:
    return task.review_within_hours or MODULE_REVIEW_HOURS[Module(task.module)]


def on_timeout(task: Task) -> str:
    return default_timeout(task.module) if task.module == Module.ARENA.value else task.on_review_timeout


def default_timeout(module: str) -> str:
    return ESCALATE if module == Module.ARENA.value else ACCEPT


def review_rule_errors(columns: dict[str, Any]) -> list[dict[str, str]]:
    """What is wrong with a task's reviewWithinHours (its bounds are settings)."""
    settings = get_settings()
    hours = columns.get("review_within_hours")
    if hours is None or settings.review_within_hours_min <= hours <= settings.review_within_hours_max:
        return []
    return [{"field": "reviewWithinHours",
             "message": f"between {settings.review_within_hours_min:g} and {settings.review_within_hours_max:g}"}]


def schedule_review(task: Task, claim: Claim, submitted_at: datetime) -> None:
    """Set when the submission's review falls due, and when ``review.due`` is emitted."""
    window = timedelta(hours=review_hours(task))
    claim.review_due_at = submitted_at + window
    claim.review_warn_at = claim.review_due_at - min(
        timedelta(seconds=get_settings().review_due_warning_seconds), window / 2)


def appeal_due(appeal: Appeal) -> datetime:
    return appeal.created_at + timedelta(seconds=get_settings().appeal_resolve_window_seconds)


def overdue_reviews(current: datetime) -> ColumnElement[bool]:
    """Submitted claims with a warning to emit or a deadline passed and not yet handed on."""
    return and_(Claim.status == ClaimStatus.SUBMITTED, or_(
        Claim.review_warn_at <= current, and_(Claim.review_due_at <= current, Claim.escalated_at.is_(None))))


def overdue_appeals(current: datetime) -> ColumnElement[bool]:
    cutoff = current - timedelta(seconds=get_settings().appeal_resolve_window_seconds)
    return and_(Appeal.status == AppealStatus.OPEN, Appeal.escalated_at.is_(None), Appeal.created_at <= cutoff)


async def _tell_due(session: AsyncSession, task: Task, claim: Claim) -> None:
    submission_id = await session.scalar(select(Submission.id).where(Submission.claim_id == claim.id))
    await emit(session, EventKind.REVIEW_DUE, ReviewDueData(
        taskId=task.id, claimId=claim.id, submissionId=submission_id or "",
        reviewDueAt=rfc3339(claim.review_due_at) or "", onReviewTimeout=on_timeout(task),
    ), **visibility(task, claim))


async def settle_reviews(session: AsyncSession, task: Task, current: datetime) -> None:
    """Under the task's lock: decide or escalate reviews past due, warn of those falling due (once:
    ``review.due`` at the warning point, or at the escalation when no sweep ran in between), and escalate
    appeals past their window. Claims are read again under the lock, so each step happens once; money
    moves before the events of its own decision (lock order, market.locks)."""
    claims = (await session.execute(locking(select(Claim).where(
        Claim.task_id == task.id, overdue_reviews(current)).order_by(Claim.submitted_at, Claim.id)))).scalars()
    for claim in claims.all():
        due = claim.review_due_at is not None and claim.review_due_at <= current and claim.escalated_at is None
        if due and on_timeout(task) == ACCEPT:
            claim.review_warn_at = None  # told by claim.reviewed (decidedBy: deadline) instead
            await accept_by_deadline(session, task, claim, current)
            continue
        if due:
            claim.escalated_at = current
        if claim.review_warn_at is not None:
            claim.review_warn_at = None
            await _tell_due(session, task, claim)
    appeals = (await session.execute(locking(select(Appeal).where(
        Appeal.task_id == task.id, overdue_appeals(current))))).scalars()
    for appeal in appeals.all():
        appeal.escalated_at = current


def _ended(claim: Claim) -> datetime | None:
    """When the claim stopped holding its slot (as stored, or as time moved it on: ``slots.as_of``)."""
    if claim.ended_at is not None:
        return claim.ended_at
    return claim.expires_at if claim.status == ClaimStatus.EXPIRED else claim.appeal_deadline


def payout_of(claim: Claim, task: Task) -> tuple[str, datetime | None]:
    """Where the claim's share of the bounty is, and since (for ``due``: until) when (docs/lifecycle.md)."""
    if task.status == TaskStatus.COMPLETED and claim.status == ClaimStatus.ACCEPTED:
        return ("paid" if claim.payout_cents > 0 or task.bounty_cents == 0 else "forfeited"), task.ended_at
    ended = _ended(claim) if not claim.holds_slot else None
    if task.status in (TaskStatus.CANCELLED, TaskStatus.EXPIRED) and (
            ended is None or task.ended_at is None or ended >= task.ended_at):
        return "refunded", task.ended_at
    if task.status not in OPEN_TASK_STATUSES or ended is not None:
        return "forfeited", ended or task.ended_at
    if claim.status == ClaimStatus.SUBMITTED and claim.escalated_at is None and on_timeout(task) == ACCEPT:
        return "due", claim.review_due_at
    return "escrowed", task.published_at
