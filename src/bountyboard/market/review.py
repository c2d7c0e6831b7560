"""Reviewing submissions and settling appeals.

A review accepts (and, outside arenas, pays and completes the task) or rejects, which opens the
appeal window (``appeal_window_seconds``). An upheld appeal accepts the claim as a review would; a
denied one lets the rejection stand and frees the slot.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.accounts.models import User
from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, conflict, invalid, not_found
from bountyboard.events.kinds import AppealOpenedData, AppealResolvedData, ClaimReviewedData, EventKind
from bountyboard.events.service import emit
from bountyboard.ids import new_id
from bountyboard.market import checking
from bountyboard.market.bonds import settle_bond
from bountyboard.market.models import OPEN_TASK_STATUSES, Appeal, AppealStatus, Claim, ClaimStatus, Submission, Task
from bountyboard.market.modules import Module, is_http_url
from bountyboard.market.payouts import pay_winner
from bountyboard.market.permissions import (
    operated_claim,
    require_admin_if_escalated,
    require_independent,
    reviewable_claim,
)
from bountyboard.market.schemas import AppealCreate, AppealResolve, ReviewDecision
from bountyboard.market.slots import check_claim_now, free_slot, visibility
from bountyboard.market.transitions import ClaimMove, check_claim, claim_conflict, move_claim, require_open


async def _accept(session: AsyncSession, task: Task, claim: Claim, score: float | None, move: ClaimMove,
                  current: datetime) -> None:
    score = claim.score if score is None else score  # a verifier's mean reward, unless the reviewer overrides
    if task.module == Module.ARENA.value and score is None:
        raise invalid("Arena submissions are accepted with a score.",
                      [{"field": "score", "message": "required to accept an arena submission"}],
                      code=ErrorCode.SCORE_REQUIRED)
    require_open(task, "accept a claim of")
    move_claim(claim, move)
    claim.score = score
    if task.module != Module.ARENA.value:
        await pay_winner(session, task, claim, current)


def _check_ticks(task: Task, decision: ReviewDecision) -> None:
    ticks = decision.deliverables
    if task.module != Module.EXCHANGE.value:
        if ticks is not None:
            raise invalid("Only exchange tasks have deliverables to tick.",
                          [{"field": "deliverables", "message": "not an exchange task"}])
        return
    if ticks is None and decision.decision == "reject":
        return
    if ticks is None or len(ticks) != len(task.deliverables):
        raise invalid(f"Tick each of the task's {len(task.deliverables)} deliverables (true or false).",
                      [{"field": "deliverables", "message": f"expected {len(task.deliverables)} ticks"}],
                      code=ErrorCode.DELIVERABLES_INCOMPLETE)
    if decision.decision == "accept" and not all(ticks):
        missing = [name for name, done in zip(task.deliverables, ticks, strict=True) if not done]
        raise invalid(f"An exchange submission is accepted only with every deliverable ticked; missing: "
                      f"{', '.join(missing)}.", [{"field": "deliverables", "message": "not all ticked"}],
                      code=ErrorCode.DELIVERABLES_INCOMPLETE)


async def review_claim(session: AsyncSession, reviewer: User, claim_id: str, decision: ReviewDecision) -> Claim:
    """submitted -> accepted | rejected (a rejection opens the appeal window)."""
    task, claim = await reviewable_claim(session, reviewer, claim_id)
    accepted = decision.decision == "accept"
    check_claim(claim, ClaimMove.ACCEPT if accepted else ClaimMove.REJECT)
    require_admin_if_escalated(reviewer, claim.escalated_at, f"The review of claim {claim.id}")
    _check_ticks(task, decision)
    submission_id = await session.scalar(select(Submission.id).where(Submission.claim_id == claim.id)
                                         .order_by(Submission.attempt.desc()).limit(1))
    run = (await checking.runs_of(session, [submission_id] if submission_id else [])).get(submission_id or "")
    if checking.pending_binding(task, run):
        raise conflict(ErrorCode.CHECKS_PENDING, f"The binding checks of claim {claim.id}'s submission have not "
                       "ended yet; review it once they have.", currentStatus=claim.status,
                       checkState=run.status if run else None)
    current = now()
    claim.reviewer_id = reviewer.id
    claim.reviewed_at = current
    claim.decided_by = "reviewer"
    claim.review_comment = decision.comment
    claim.deliverable_ticks = decision.deliverables
    await settle_bond(session, task, claim, forfeit=False)  # decided: money moves before any event
    if accepted:
        await _accept(session, task, claim, decision.score, ClaimMove.ACCEPT, current)
    else:
        move_claim(claim, ClaimMove.REJECT)
        claim.appeal_deadline = current + timedelta(seconds=get_settings().appeal_window_seconds)
    await _tell_reviewed(session, task, claim)
    await session.flush()
    return claim


async def _tell_reviewed(session: AsyncSession, task: Task, claim: Claim) -> None:
    submission_id = await session.scalar(select(Submission.id).where(Submission.claim_id == claim.id)
                                         .order_by(Submission.attempt.desc()).limit(1))
    await emit(session, EventKind.CLAIM_REVIEWED, ClaimReviewedData(
        taskId=task.id, claimId=claim.id, submissionId=submission_id or "",
        decision="accepted" if claim.status == ClaimStatus.ACCEPTED else "rejected",
        reviewState=claim.review_state, comment=claim.review_comment, score=claim.score,
        decidedBy=claim.decided_by or "reviewer",
    ), **visibility(task, claim))


async def accept_by_deadline(session: AsyncSession, task: Task, claim: Claim, current: datetime) -> None:
    """pending -> accepted by the review deadline (market.deadlines): paid like a reviewer's acceptance.
    The decision is dated at the deadline; the money moves now."""
    claim.reviewed_at = claim.review_due_at
    claim.decided_by = "deadline"
    claim.review_comment = "Accepted: no review before the deadline."
    await settle_bond(session, task, claim, forfeit=False)  # decided: money moves before any event
    await _accept(session, task, claim, None, ClaimMove.ACCEPT, current)
    await _tell_reviewed(session, task, claim)


async def open_appeal(session: AsyncSession, actor: Actor, claim_id: str, body: AppealCreate) -> Appeal:
    """rejected -> appealed, within the appeal window, by the holder or its operator."""
    task, claim = await operated_claim(session, actor, claim_id)
    await check_claim_now(session, task, claim, ClaimMove.APPEAL)
    if not claim.holds_slot or task.status not in OPEN_TASK_STATUSES:
        raise claim_conflict(claim, "appeal", ErrorCode.APPEAL_WINDOW_CLOSED)
    bad = [{"field": f"evidenceUrls.{i}", "message": "must be an absolute http(s) URL"}
           for i, url in enumerate(body.evidenceUrls) if not is_http_url(url)]
    if bad:
        raise invalid("Evidence must be given as absolute http(s) URLs.", bad)
    current = now()
    appeal = Appeal(id=new_id("apl"), claim_id=claim.id, task_id=task.id, opened_by=actor.user_id,
                    reason=body.reason, evidence_urls=body.evidenceUrls, status=AppealStatus.OPEN, created_at=current)
    session.add(appeal)
    move_claim(claim, ClaimMove.APPEAL)
    await emit(session, EventKind.APPEAL_OPENED, AppealOpenedData(
        taskId=task.id, claimId=claim.id, appealId=appeal.id, reason=body.reason, reviewState=claim.review_state,
    ), **visibility(task, claim))
    await session.flush()
    return appeal


async def resolve_appeal(session: AsyncSession, reviewer: User, appeal_id: str, body: AppealResolve) -> Appeal:
    """appealed -> appeal_upheld (the claim is accepted and settled) | appeal_denied (its slot frees)."""
    claim_id = await session.scalar(select(Appeal.claim_id).where(Appeal.id == appeal_id))
    if claim_id is None:
        raise not_found("appeal", appeal_id)
    task, claim = await reviewable_claim(session, reviewer, claim_id)
    require_independent(reviewer, claim)
    appeal = (await session.execute(select(Appeal).where(Appeal.id == appeal_id)
                                    .execution_options(populate_existing=True))).scalar_one()
    require_admin_if_escalated(reviewer, appeal.escalated_at, f"Appeal {appeal.id}")
    if appeal.status != AppealStatus.OPEN:
        raise conflict(ErrorCode.INVALID_TRANSITION, f"Appeal {appeal.id} is already resolved ({appeal.outcome}).",
                       currentStatus=appeal.status, outcome=appeal.outcome, reviewState=claim.review_state)
    current = now()
    if body.outcome == "upheld":
        await _accept(session, task, claim, body.score, ClaimMove.UPHOLD, current)
    else:
        move_claim(claim, ClaimMove.DENY)
        free_slot(task, claim, current)
    appeal.status = AppealStatus.RESOLVED
    appeal.outcome = body.outcome
    appeal.comment = body.comment
    appeal.resolver_id = reviewer.id
    appeal.resolved_at = current
    await emit(session, EventKind.APPEAL_RESOLVED, AppealResolvedData(
        taskId=task.id, claimId=claim.id, appealId=appeal.id, outcome=body.outcome,
        reviewState=claim.review_state, comment=body.comment,
    ), **visibility(task, claim))
    await session.flush()
    return appeal
