"""What the marketplace's rows look like on the wire: tasks, claims with their status and next action,
submissions, appeals (the reads and the flows' answers share them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import Bot
from bountyboard.checks.models import CheckRun
from bountyboard.clock import now, rfc3339
from bountyboard.contract.artifacts import ArtifactType
from bountyboard.ledger.service import from_cents
from bountyboard.market import checking
from bountyboard.market.deadlines import on_timeout, payout_of, review_hours
from bountyboard.market.models import (
    OPEN_TASK_STATUSES,
    Appeal,
    Claim,
    ClaimStatus,
    ReviewState,
    Submission,
    Task,
    TaskStatus,
)
from bountyboard.market.modules import Module, allowed_types, is_claimable
from bountyboard.market.schemas import (
    AgentClaimStatus,
    AgentTask,
    AppealOut,
    ClaimBond,
    ClaimCreated,
    ClaimDetail,
    Payout,
    SubmissionOut,
    SubmissionReceipt,
)


def task_next_action(task: Task) -> str:
    if task.status == TaskStatus.PUBLISHED and is_claimable(Module(task.module)) and (
            task.deadline is None or task.deadline > now()):
        return "claim"
    if task.status == TaskStatus.IN_PROGRESS:
        return "wait"
    return "none"


def task_next_action_ends(task: Task) -> datetime | None:
    """When the clock alone will change :func:`task_next_action` (a claimable task's deadline), if ever."""
    return task.deadline if task_next_action(task) == "claim" else None


def _escrow(task: Task) -> tuple[str, int]:
    if task.bounty_cents == 0 or task.status == TaskStatus.DRAFT:
        return "none", 0
    if task.status in OPEN_TASK_STATUSES:
        return "held", task.bounty_cents
    return ("released" if task.status == TaskStatus.COMPLETED else "refunded"), 0


def task_out(task: Task) -> AgentTask:
    escrow_status, escrow_cents = _escrow(task)
    return AgentTask(
        id=task.id, module=Module(task.module), title=task.title, description=task.description, status=task.status,
        bountyAmount=from_cents(task.bounty_cents), currentClaims=task.slots_taken,
        nextAction=task_next_action(task), allowedArtifactTypes=[ArtifactType(t) for t in allowed_types(task.module)],
        maxClaims=task.max_claims, claimTtlSeconds=task.claim_ttl_seconds, deadline=rfc3339(task.deadline),
        deliverables=list(task.deliverables or []), repositoryUrl=task.repository_url,
        sourceLanguage=task.source_language, targetLanguage=task.target_language, rubric=task.rubric,
        targetClaimId=task.target_claim_id,
        payoutSplit=[bps / 10_000 for bps in task.payout_split] if task.payout_split else None,
        checks=checking.public_checks(task), escrowStatus=escrow_status, escrowAmount=from_cents(escrow_cents),
        publisherId=task.publisher_id,
        createdAt=rfc3339(task.created_at) or "", publishedAt=rfc3339(task.published_at),
        endedAt=rfc3339(task.ended_at), reviewWithinHours=review_hours(task), onReviewTimeout=on_timeout(task),
        minReputation=task.min_reputation, minCompleted=task.min_completed,
        claimBond=from_cents(task.claim_bond_cents), eligible=None, ineligibleReason=None,
    )


def claim_next_action(claim: Claim, checks: dict[str, Any] | None = None) -> str:
    """What the holder does next; ``checks`` are its latest submission's (DESIGN.md section 13)."""
    check_state = checks.get("status") if checks else None
    if claim.status == ClaimStatus.ACTIVE:
        return "fix_and_resubmit" if check_state == "failed" and checks and checks.get("binding") else "submit"
    if claim.status == ClaimStatus.SUBMITTED:
        return "wait_for_checks" if check_state in ("queued", "running") else "wait_for_review"
    if claim.review_state == ReviewState.APPEALED:
        return "wait_for_appeal"
    if claim.review_state == ReviewState.REJECTED and claim.holds_slot:
        return "appeal_or_done"
    return "done"


def claim_created(claim: Claim) -> ClaimCreated:
    return ClaimCreated(claimId=claim.id, taskId=claim.task_id, status=claim.status,
                        nextAction=claim_next_action(claim), expiresAt=rfc3339(claim.expires_at))


async def receipt(session: AsyncSession, task: Task, submission: Submission) -> SubmissionReceipt:
    """The receipt as recorded (a retry of the same submission gets it again), with its checks as they
    stand: ``queued`` at first."""
    # A task without checks queues no run: nothing to look up on the submit's path.
    checks = checking.checks_out(task, (await checking.runs_of(session, [submission.id])).get(submission.id)) \
        if task.checks else None
    waiting = checks is not None and checks["status"] in ("queued", "running")
    return SubmissionReceipt(
        submissionId=submission.id, claimId=submission.claim_id, status=ClaimStatus.SUBMITTED,
        reviewState=ReviewState.PENDING, submittedAt=rfc3339(submission.created_at) or "",
        nextAction="wait_for_checks" if waiting else "wait_for_review", contentSha256=submission.content_sha256,
        checks=checks, attempt=submission.attempt,
    )


def submission_out(submission: Submission, checks: dict[str, Any] | None = None) -> SubmissionOut:
    return SubmissionOut(id=submission.id, resultType=ArtifactType(submission.result_type),
                         content=submission.content, attachments=list(submission.attachments or []),
                         contentSha256=submission.content_sha256, submittedAt=rfc3339(submission.created_at) or "",
                         attempt=submission.attempt, checks=checks)


def appeal_out(appeal: Appeal) -> AppealOut:
    return AppealOut.model_validate(appeal)


@dataclass
class _Context:
    tasks: dict[str, Task]
    history: dict[str, list[Submission]]  # per claim, oldest first
    runs: dict[str, CheckRun]  # per submission
    appeals: dict[str, str]

    def latest(self, claim: Claim) -> Submission | None:
        submissions = self.history.get(claim.id)
        return submissions[-1] if submissions else None

    def checks(self, submission: Submission | None) -> dict[str, Any] | None:
        if submission is None:
            return None
        return checking.checks_out(self.tasks[submission.task_id], self.runs.get(submission.id))


async def _claim_context(session: AsyncSession, claims: Sequence[Claim]) -> _Context:
    ids = [claim.id for claim in claims]
    task_ids = {claim.task_id for claim in claims}
    tasks = {t.id: t for t in (await session.execute(select(Task).where(Task.id.in_(task_ids)))).scalars()}
    history: dict[str, list[Submission]] = {}
    for submission in (await session.execute(select(Submission).where(Submission.claim_id.in_(ids))
                                             .order_by(Submission.attempt))).scalars():
        history.setdefault(submission.claim_id, []).append(submission)
    runs = await checking.runs_of(session, [s.id for submissions in history.values() for s in submissions]) \
        if any(tasks[task_id].checks for task_id in task_ids) else {}
    appeals = dict((await session.execute(
        select(Appeal.claim_id, Appeal.id).where(Appeal.claim_id.in_(ids)))).all())
    return _Context(tasks, history, runs, appeals)


def _status_fields(claim: Claim, context: _Context) -> dict[str, Any]:
    task, submission = context.tasks[claim.task_id], context.latest(claim)
    appeal_id = context.appeals.get(claim.id)
    checks = context.checks(submission)
    return {
        "checks": checks, "checkState": checks["status"] if checks else None,
        "attemptsLeft": checking.attempts_left(task, submission),
        "id": claim.id, "taskId": claim.task_id, "status": claim.status,
        "resultType": submission.result_type if submission else None,
        "submittedAt": rfc3339(claim.submitted_at), "nextAction": claim_next_action(claim, checks),
        "reviewState": claim.review_state, "module": Module(task.module), "botId": claim.bot_id,
        "operatorId": claim.operator_id, "claimedAt": rfc3339(claim.created_at) or "",
        "expiresAt": rfc3339(claim.expires_at) if claim.status == ClaimStatus.ACTIVE else None,
        "submissionId": submission.id if submission else None, "reviewComment": claim.review_comment,
        "score": claim.score, "deliverables": claim.deliverable_ticks,
        "appealDeadline": rfc3339(claim.appeal_deadline), "appealId": appeal_id, "rank": claim.rank,
        "payoutAmount": from_cents(claim.payout_cents), **_deadline_fields(claim, task),
        "bond": ClaimBond(amount=from_cents(claim.bond_cents), state=claim.bond_state) if claim.bond_state else None,
    }


def _deadline_fields(claim: Claim, task: Task) -> dict[str, Any]:
    stage, at = payout_of(claim, task)
    return {"reviewDueAt": rfc3339(claim.review_due_at), "decidedBy": claim.decided_by,
            "escalatedAt": rfc3339(claim.escalated_at), "payout": Payout(stage=stage, at=rfc3339(at))}


async def claim_statuses(session: AsyncSession, claims: Sequence[Claim]) -> list[AgentClaimStatus]:
    context = await _claim_context(session, claims)
    return [AgentClaimStatus(**_status_fields(claim, context)) for claim in claims]


async def claim_details(session: AsyncSession, claims: Sequence[Claim]) -> list[ClaimDetail]:
    context = await _claim_context(session, claims)
    bot_ids = {claim.bot_id for claim in claims if claim.bot_id}
    bot_names = dict((await session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(bot_ids)))).all()) \
        if bot_ids else {}
    details = []
    for claim in claims:
        task, submission = context.tasks[claim.task_id], context.latest(claim)
        history = [submission_out(s, context.checks(s)) for s in context.history.get(claim.id, [])]
        details.append(ClaimDetail(**_status_fields(claim, context),
                                   taskTitle=task.title, taskDeliverables=list(task.deliverables or []),
                                   botName=bot_names.get(claim.bot_id) if claim.bot_id else None,
                                   submission=history[-1] if submission else None, submissionHistory=history))
    return details
