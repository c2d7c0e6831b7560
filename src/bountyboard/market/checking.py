"""Checks before review in the marketplace (DESIGN.md section 13, docs/checks.md).

* A submit to a task with checks queues a check run in its own transaction (:func:`queue_checks`).
* The runner (:func:`run_checks_once`, a periodic job of :mod:`bountyboard.worker`, so in
  ``bountyboard serve`` and ``bountyboard worker``) leases due runs, checks each submission in the
  sandbox and, in the transaction that records the outcome, applies it (:func:`_apply`): a binding
  failure sends the claim back to ``active`` (or rejects it when no attempt is left); in an arena the
  verifier's mean reward becomes the claim's score; ``claim.checked`` is emitted.
* :func:`require_self_test` refuses to publish a verifier that fails its reference solution or
  passes an empty submission.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from sqlalchemy import Select, case, delete, exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from bountyboard.accounts.models import User
from bountyboard.checks import bundle, jobs
from bountyboard.checks.models import FINAL, CheckRun, RunStatus, VerifierArchive
from bountyboard.checks.spec import ChecksSpec, calibrate, run_checks
from bountyboard.checks.verifier import compare_receipts
from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem, invalid, not_found
from bountyboard.events.kinds import ClaimCheckedData, EventKind
from bountyboard.events.service import emit
from bountyboard.ids import new_id
from bountyboard.market.bonds import settle_bond
from bountyboard.market.files import storage
from bountyboard.market.files.models import Upload
from bountyboard.market.locks import lock_task, locked_claim
from bountyboard.market.models import Claim, ClaimStatus, Submission, Task, TaskStatus
from bountyboard.market.modules import Module
from bountyboard.market.permissions import require_task_owner
from bountyboard.market.slots import visibility
from bountyboard.market.transitions import ClaimMove, move_claim, task_conflict
from bountyboard.storage.engine import get_database

MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024


def checks_of(task: Task) -> ChecksSpec | None:
    return ChecksSpec.model_validate(task.checks) if task.checks else None


# The reads below take the stored checks as they are (validated when the publisher set them): a task
# list or a claim status does not parse rules and schemas again.
def _binding(task: Task) -> bool:
    return bool((task.checks or {}).get("binding", True))


def public_checks(task: Task) -> dict[str, Any] | None:
    """What agents see of a task's checks: everything but the verifier's files and the solution."""
    if not task.checks:
        return None
    verifier = task.checks.get("verifier")
    return {"binding": _binding(task), "maxAttempts": task.checks.get("maxAttempts"),
            "rules": task.checks.get("rules") or [],
            "verifier": {key: verifier.get(key) for key in ("trials", "timeoutSec", "passThreshold")}
            if verifier else None}


def body_of(submission: Submission) -> dict[str, Any]:
    """The submission as the checks read it (``submission.json``): the body as recorded."""
    return {"resultType": submission.result_type, "content": submission.content,
            "attachments": list(submission.attachments or [])}


async def attachment_bytes(session: AsyncSession, submission: Submission) -> dict[str, bytes]:
    """The bytes of the submission's uploaded attachments by file name, for the verifier's
    ``/app/submission/attachments/``; more than ``MAX_ATTACHMENT_BYTES`` in all is a ``ValueError``."""
    files: dict[str, bytes] = {}
    total = 0
    for item in submission.attachments or []:
        upload = await session.get(Upload, item["fileKey"]) if item.get("fileKey") else None
        if upload is None:
            continue
        chunks = []
        async for chunk in storage.read(upload.object_key):
            total += len(chunk)
            if total > MAX_ATTACHMENT_BYTES:
                raise ValueError(f"the attachments exceed the {MAX_ATTACHMENT_BYTES} bytes a verifier reads")
            chunks.append(chunk)
        files[item.get("fileName") or upload.file_name] = b"".join(chunks)
    return files


def _archive_key(checks: dict[str, Any] | None) -> str | None:
    """The verifier archive ``checks`` names (None for a verifier given inline, or none at all)."""
    return ((checks or {}).get("verifier") or {}).get("archiveKey")


async def archive_of(session: AsyncSession, checks: dict[str, Any] | None) -> bytes | None:
    """The bytes of the verifier archive ``checks`` names (None for a verifier given inline)."""
    key = _archive_key(checks)
    if key is None:
        return None
    return await session.scalar(select(VerifierArchive.content).where(VerifierArchive.id == key)) or b""


async def queue_checks(session: AsyncSession, task: Task, submission: Submission) -> None:
    if task.checks:
        await jobs.enqueue(session, submission.id)


async def runs_of(session: AsyncSession, submission_ids: Iterable[str]) -> dict[str, CheckRun]:
    ids = list(submission_ids)
    if not ids:
        return {}
    rows = await session.execute(select(CheckRun).where(CheckRun.submission_id.in_(ids)))
    return {run.submission_id: run for run in rows.scalars()}


def checks_out(task: Task, run: CheckRun | None) -> dict[str, Any] | None:
    """A submission's ``checks`` (None when its task has none)."""
    if run is None:
        return None
    if run.status in FINAL and run.result is not None:
        return dict(run.result)
    return {"status": run.status.value, "binding": _binding(task), "rules": [], "verifier": None}


def attempts_left(task: Task, submission: Submission | None) -> int | None:
    if not task.checks:
        return None
    return max(int(task.checks.get("maxAttempts") or 1) - (submission.attempt if submission else 0), 0)


def pending_binding(task: Task, run: CheckRun | None) -> bool:
    """Whether review must wait: binding checks that have not ended."""
    return bool(task.checks) and _binding(task) and run is not None and run.status not in FINAL


async def require_self_test(checks: dict[str, Any] | None, archive: bytes | None) -> None:
    """422 ``checks_self_test_failed`` unless the verifier of ``checks`` (its tests in ``archive`` when
    it names one) passes its self-test (run outside any transaction: it takes as long as the
    verifier's trials)."""
    spec = ChecksSpec.model_validate(checks) if checks else None
    tested = await calibrate(spec, archive=archive) if spec is not None else None
    if tested is None or tested.passed:
        return
    failing = tested.reference if tested.failing_case == "reference_solution" else tested.empty
    raise Problem(422, ErrorCode.CHECKS_SELF_TEST_FAILED, tested.problem_detail() or "",
                  case=tested.failing_case, outputExcerpt=None if failing is None else failing.output_excerpt[-500:])


# Verifier archives ------------------------------------------------------------------------------

async def store_verifier_archive(session: AsyncSession, publisher: User, task_id: str,
                                 archive: bytes) -> VerifierArchive:
    """A draft's verifier as a ``.tar.gz`` of its ``tests/`` directory: checked to unpack as every run
    will unpack it (before the task is locked: it may take a moment), stored, and named by the
    ``archiveKey`` the draft's checks then give. Archives of the task its checks do not name (an
    earlier upload, replaced) are dropped."""
    try:
        await asyncio.to_thread(bundle.check_archive, archive)
    except bundle.BundleError as exc:
        raise invalid(f"The verifier archive is refused: {exc}.", [{"field": "body", "message": str(exc)}],
                      code=ErrorCode.INVALID_TASK) from exc
    task = await lock_task(session, task_id)
    if task is None:
        raise not_found("task", task_id)
    require_task_owner(publisher, task)
    if task.status != TaskStatus.DRAFT:
        raise task_conflict(task, "edit")
    replaced = [VerifierArchive.task_id == task.id]
    if (named := _archive_key(task.checks)) is not None:
        replaced.append(VerifierArchive.id != named)
    await session.execute(delete(VerifierArchive).where(*replaced))
    stored = VerifierArchive(id=new_id("vfa"), task_id=task.id, sha256=hashlib.sha256(archive).hexdigest(),
                             size_bytes=len(archive), content=archive, created_at=now())
    session.add(stored)
    await session.flush()
    return stored


async def is_archive_of(session: AsyncSession, archive_key: str, task_id: str | None) -> bool:
    return task_id is not None and await session.scalar(select(exists().where(
        VerifierArchive.id == archive_key, VerifierArchive.task_id == task_id))) is True


# The review queue --------------------------------------------------------------------------------

CheckFilter = Literal["passed", "failed", "error", "pending", "none"]
CheckOrder = Literal["submitted", "checks"]
_OUTCOME_RANK = case((CheckRun.status == RunStatus.PASSED, 0), (CheckRun.status.is_(None), 1),
                     (CheckRun.status == RunStatus.ERROR, 3), (CheckRun.status == RunStatus.FAILED, 4), else_=2)


def by_checks(query: Select[Any], checks: str | None, order: str) -> tuple[Select[Any], tuple[Any, ...]]:
    """The review queue (claims awaiting review) with their latest submission's check run: filtered by
    its outcome (``none``: a task without checks; ``pending``: queued or running) and, for
    ``order=checks``, passed first, then unchecked, pending, errors and failures."""
    if checks is None and order != "checks":
        return query, ()
    newer = aliased(Submission)
    query = (query.join(Submission, Submission.claim_id == Claim.id)
             .where(~exists().where(newer.claim_id == Claim.id, newer.attempt > Submission.attempt))
             .outerjoin(CheckRun, CheckRun.submission_id == Submission.id))
    if checks == "none":
        query = query.where(CheckRun.id.is_(None))
    elif checks == "pending":
        query = query.where(CheckRun.status.in_([RunStatus.QUEUED, RunStatus.RUNNING]))
    elif checks is not None:
        query = query.where(CheckRun.status == RunStatus(checks))
    return query, (_OUTCOME_RANK,) if order == "checks" else ()


# The runner ---------------------------------------------------------------------------------------

def _error(message: str) -> jobs.Outcome:
    return jobs.Outcome(RunStatus.ERROR, {"status": "error", "binding": False, "rules": [], "verifier": None,
                                          "error": message})


async def _execute(held: jobs.Lease) -> jobs.Outcome:
    async with get_database().sessionmaker() as session:
        submission = await session.get(Submission, held.submission_id)
        task = await session.get(Task, submission.task_id) if submission else None
        spec = checks_of(task) if task else None
        if submission is None or task is None or spec is None:
            return _error("the submission or its task's checks are gone")
        try:
            files = await attachment_bytes(session, submission)
        except (ValueError, OSError) as exc:  # too large, or gone from the store
            return _error(f"the attachments could not be laid out: {exc}")
        archive = await archive_of(session, task.checks)
    result = await run_checks(spec, body_of(submission), attachments=files, archive=archive)
    return jobs.Outcome(RunStatus(result.status), result.checks, result.receipt)


async def _apply(session: AsyncSession, held: jobs.Lease, outcome: jobs.Outcome) -> None:
    """The outcome's effect on the claim, in the transaction that records it."""
    submission = await session.get(Submission, held.submission_id)
    if submission is None:
        return
    task, claim = await locked_claim(session, submission.claim_id)
    spec = checks_of(task)
    latest = await session.scalar(select(Submission.id).where(Submission.claim_id == claim.id)
                                  .order_by(Submission.attempt.desc()).limit(1))
    current = now()
    still_pending = claim.status == ClaimStatus.SUBMITTED and latest == submission.id
    verifier = outcome.result.get("verifier") or {}
    if still_pending and task.module == Module.ARENA.value and verifier.get("meanReward") is not None:
        claim.score = float(verifier["meanReward"])
    left = attempts_left(task, submission) or 0
    if still_pending and spec is not None and spec.binding and outcome.status == RunStatus.FAILED:
        if left > 0:
            move_claim(claim, ClaimMove.SEND_BACK)
            claim.submitted_at = None
            claim.expires_at = current + timedelta(seconds=task.claim_ttl_seconds)
            claim.review_due_at = claim.review_warn_at = None  # no review is due until it is submitted again
        else:
            await settle_bond(session, task, claim, forfeit=False)  # decided: money moves before any event
            move_claim(claim, ClaimMove.REJECT)
            claim.reviewed_at = current
            claim.decided_by = "checks"
            claim.review_comment = "The binding checks failed and the claim has no attempt left."
            claim.appeal_deadline = current + timedelta(seconds=get_settings().appeal_window_seconds)
    await emit(session, EventKind.CLAIM_CHECKED, ClaimCheckedData(
        taskId=task.id, claimId=claim.id, submissionId=submission.id, checks=outcome.result,
        claimStatus=claim.status, attemptsLeft=left,
    ), **visibility(task, claim))
    await session.flush()


_in_flight: set[asyncio.Task[bool]] = set()


async def run_checks_once() -> int:
    """One tick of the check runner: lease as many due runs as this process has free slots
    (``check_concurrency`` in flight at most) and start each; returns how many were started. A run
    outlives the tick: the next tick fills the slots that freed meanwhile."""
    settings = get_settings()
    loop = asyncio.get_running_loop()
    busy = sum(1 for task in _in_flight if task.get_loop() is loop)
    free = settings.check_concurrency - busy
    if free <= 0:
        return 0
    sessionmaker = get_database().sessionmaker
    async with sessionmaker() as session, session.begin():
        leases = await jobs.lease(session, lease_seconds=settings.check_lease_seconds, limit=free)
    for held in leases:
        task = asyncio.create_task(jobs.run_leased(sessionmaker, _execute, held, _apply))
        _in_flight.add(task)
        task.add_done_callback(_in_flight.discard)
    return len(leases)


# Replay (``bountyboard checks replay``) -----------------------------------------------------------

@dataclass(frozen=True)
class Recorded:
    submission_id: str
    checks: ChecksSpec
    body: dict[str, Any]
    attachments: dict[str, bytes]
    archive: bytes | None
    status: str
    receipt: dict[str, Any] | None


async def recorded(session: AsyncSession, submission_id: str) -> Recorded:
    """What a replay needs: the task's checks, the submission as recorded and the run's outcome."""
    submission = await session.get(Submission, submission_id)
    task = await session.get(Task, submission.task_id) if submission else None
    run = (await runs_of(session, [submission_id])).get(submission_id)
    spec = checks_of(task) if task else None
    if submission is None or spec is None or run is None or run.status not in FINAL:
        raise Problem(404, ErrorCode.NOT_FOUND, f"Submission {submission_id} has no finished check run to replay.")
    return Recorded(submission_id, spec, body_of(submission), await attachment_bytes(session, submission),
                    await archive_of(session, task.checks if task else None), run.status.value, run.receipt)


async def replay(before: Recorded) -> dict[str, Any]:
    """Run the checks again on the same inputs and compare with the recorded receipt (rules alone,
    without a verifier, compare their status)."""
    again = await run_checks(before.checks, before.body, attachments=before.attachments, archive=before.archive)
    if before.receipt is not None and again.receipt is not None:
        comparison = compare_receipts(before.receipt, again.receipt)
    else:
        same = before.status == again.status
        comparison = {"agrees": same, "sameInputs": True, "differences": [] if same else [
            {"field": "status", "recorded": before.status, "replayed": again.status}]}
    recorded_status = (before.receipt or {}).get("status", before.status)
    return {"submissionId": before.submission_id, "recordedStatus": recorded_status,
            "replayedStatus": again.status, **comparison, "replayedReceipt": again.receipt}
