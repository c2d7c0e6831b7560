"""Submitting a claim's final artifact: active -> submitted, recorded once.

The rules a submission must meet are checked in :func:`check_submission`; the module rules themselves
live in :mod:`bountyboard.market.modules`.
"""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.clock import now, rfc3339
from bountyboard.errors import ErrorCode, conflict, invalid
from bountyboard.events.kinds import ClaimSubmittedData, EventKind
from bountyboard.events.service import emit
from bountyboard.ids import new_id
from bountyboard.market import checking
from bountyboard.market.deadlines import schedule_review
from bountyboard.market.files.service import attachments_of
from bountyboard.market.locks import locked_claim
from bountyboard.market.models import Claim, ClaimStatus, Submission, Task
from bountyboard.market.modules import Module, submission_errors
from bountyboard.market.permissions import held_claim
from bountyboard.market.schemas import SubmissionBody
from bountyboard.market.slots import check_claim_now, visibility
from bountyboard.market.transitions import ClaimMove, move_claim
from bountyboard.storage.unit_of_work import insert_new, write_changes


def _fingerprint(body: SubmissionBody) -> str:
    canonical = json.dumps(body.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


# The claim's latest submission (several only when binding checks sent work back); built once.
_SUBMISSION_OF_CLAIM = (select(Submission).where(Submission.claim_id == bindparam("claim_id"))
                        .order_by(Submission.attempt.desc()).limit(1))


async def _same_submission(session: AsyncSession, claim: Claim, fingerprint: str) -> tuple[Submission | None, int]:
    """The claim's latest submission when the body is the same (a retry), else None, with the number
    of the next attempt; 409 when the claim awaits a decision on another body."""
    existing = await session.scalar(_SUBMISSION_OF_CLAIM, {"claim_id": claim.id})
    if existing is None:
        return None, 1
    if claim.status == ClaimStatus.ACTIVE:  # checks sent the last one back: this is the next attempt
        return None, existing.attempt + 1
    if existing.fingerprint != fingerprint:
        raise conflict(ErrorCode.ALREADY_SUBMITTED,
                       f"Claim {claim.id} already has a submission ({existing.id}) with another body; "
                       "a submission is recorded once.", currentStatus=claim.status,
                       reviewState=claim.review_state, submissionId=existing.id)
    return existing, existing.attempt


def check_submission(task: Task, body: SubmissionBody) -> None:
    """422 unless the submission meets the rules of the task's module."""
    errors = submission_errors(Module(task.module), body.resultType.value, body.content,
                               [a.type.value for a in body.attachments], task.rubric)
    if errors:
        code = (ErrorCode.ARTIFACT_TYPE_NOT_ALLOWED if errors[0]["field"] == "resultType"
                else ErrorCode.INVALID_SUBMISSION)
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise invalid(f"The submission breaks the rules of this {task.module} task: {summary}", errors, code=code)


async def submit(session: AsyncSession, actor: Actor, claim_id: str, body: SubmissionBody
                 ) -> tuple[Task, Submission]:
    """active -> submitted. Recorded once: the same body again returns the first submission. With the
    task, which the receipt reads (the session keeps only what is still referenced)."""
    fingerprint = _fingerprint(body)
    task, claim = await held_claim(session, actor, claim_id)
    existing, attempt = await _same_submission(session, claim, fingerprint)
    if existing is not None:
        return task, existing
    await check_claim_now(session, task, claim, ClaimMove.SUBMIT)
    check_submission(task, body)
    current = now()
    content = body.content
    submission = Submission(
        id=new_id("sub"), claim_id=claim.id, task_id=task.id, result_type=body.resultType.value, content=content,
        attachments=await attachments_of(session, claim, body.attachments),
        content_sha256=hashlib.sha256((content or "").encode()).hexdigest(), fingerprint=fingerprint,
        created_at=current, attempt=attempt,
    )
    try:
        await insert_new(session, submission)  # read below, never changed: no unit of work needed
    except IntegrityError:
        # Only reachable if another writer got past the claim lock: answer as a retry would be.
        await session.rollback()
        task, claim = await locked_claim(session, claim_id)
        existing, _ = await _same_submission(session, claim, fingerprint)
        if existing is None:
            raise
        return task, existing
    move_claim(claim, ClaimMove.SUBMIT)
    claim.submitted_at = current
    schedule_review(task, claim, current)
    await write_changes(session, claim)
    await emit(session, EventKind.CLAIM_SUBMITTED, ClaimSubmittedData(
        taskId=task.id, claimId=claim.id, submissionId=submission.id, resultType=submission.result_type,
        submittedAt=rfc3339(current), contentSha256=submission.content_sha256, reviewState=claim.review_state,
    ), **visibility(task, claim))
    await session.flush()
    await checking.queue_checks(session, task, submission)
    return task, submission
