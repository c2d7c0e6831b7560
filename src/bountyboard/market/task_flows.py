"""What a publisher does to a task once it is drafted: publish, cancel, close (arena), fund (donate).

Each flow locks the task row first (:mod:`bountyboard.market.locks`), commits, and emits its event in
the same transaction. A refused flow raises a :class:`~bountyboard.errors.Problem` and changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import User
from bountyboard.clock import now
from bountyboard.errors import ErrorCode, conflict, invalid, not_found
from bountyboard.events.kinds import EventKind, TaskEndedData, TaskPublishedData
from bountyboard.events.service import emit
from bountyboard.ledger import service as ledger
from bountyboard.market.locks import lock_task
from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus
from bountyboard.market.modules import Module
from bountyboard.market.payouts import close_arena
from bountyboard.market.permissions import owned_task
from bountyboard.market.slots import wind_up
from bountyboard.market.transitions import TaskMove, check_task, move_task, require_open


async def publish_task(session: AsyncSession, publisher: User, task_id: str,
                       tested_checks: dict[str, Any] | None = None) -> Task:
    """draft -> published, escrowing the bounty from the publisher's balance. ``tested_checks`` are
    the checks whose verifier passed its self-test (``checking.require_self_test``), before this unit
    of work: if the draft's checks changed since, publishing is refused (409)."""
    task = await owned_task(session, publisher, task_id)
    check_task(task, TaskMove.PUBLISH)
    if task.checks != tested_checks:
        raise conflict(ErrorCode.INVALID_TRANSITION, f"The checks of task {task.id} changed while its verifier "
                       "was being tested; publish again.", currentStatus=task.status)
    current = now()
    if task.deadline is not None and task.deadline <= current:
        raise invalid("The deadline has passed; edit it before publishing.",
                      [{"field": "deadline", "message": "must be in the future"}])
    if task.bounty_cents > 0:
        await ledger.transfer(session, ledger.user_account(task.publisher_id), ledger.escrow_account(task.id),
                              task.bounty_cents, ledger.EntryKind.ESCROW, task_id=task.id, memo="bounty escrow")
    move_task(task, TaskMove.PUBLISH)
    task.published_at = task.updated_at = current
    await emit(session, EventKind.TASK_PUBLISHED, TaskPublishedData(
        taskId=task.id, module=task.module, status=task.status, bountyAmount=ledger.from_cents(task.bounty_cents),
    ), publisher_id=task.publisher_id)
    await session.flush()
    return task


async def pending_reviews(session: AsyncSession, task_id: str) -> int:
    """Submissions and appeals of the task that still await a decision."""
    return int(await session.scalar(select(func.count()).select_from(Claim).where(
        Claim.task_id == task_id,
        or_(Claim.status == ClaimStatus.SUBMITTED, Claim.review_state == ReviewState.APPEALED),
    )) or 0)


async def _refuse_if_pending(session: AsyncSession, task: Task, action: str) -> None:
    pending = await pending_reviews(session, task.id)
    if pending:
        raise conflict(ErrorCode.REVIEWS_PENDING,
                       f"Cannot {action} task {task.id}: {pending} submission(s) or appeal(s) await a decision.",
                       currentStatus=task.status, pendingReviews=pending)


async def end_task(session: AsyncSession, task: Task, move: TaskMove, current: datetime) -> None:
    """published | in_progress | draft -> cancelled | expired, refunding the escrow."""
    refunded = await ledger.refund_escrow(session, task.id)
    await wind_up(session, task, current)
    move_task(task, move)
    task.ended_at = task.updated_at = current
    kind = EventKind.TASK_CANCELLED if move == TaskMove.CANCEL else EventKind.TASK_EXPIRED
    await emit(session, kind, TaskEndedData(
        taskId=task.id, module=task.module, status=task.status, refundedAmount=ledger.from_cents(refunded),
    ), publisher_id=task.publisher_id)


async def cancel_task(session: AsyncSession, publisher: User, task_id: str) -> Task:
    task = await owned_task(session, publisher, task_id)
    check_task(task, TaskMove.CANCEL)
    await _refuse_if_pending(session, task, "cancel")
    await end_task(session, task, TaskMove.CANCEL, now())
    await session.flush()
    return task


async def close_task(session: AsyncSession, publisher: User, task_id: str) -> Task:
    """Close an arena: rank its accepted submissions and pay them by ``payoutSplit``."""
    task = await owned_task(session, publisher, task_id)
    if task.module != Module.ARENA.value:
        raise conflict(ErrorCode.NOT_ARENA, f"Only arena tasks are closed; task {task.id} is a {task.module} task.",
                       currentStatus=task.status)
    check_task(task, TaskMove.CLOSE)
    await _refuse_if_pending(session, task, "close")
    await close_arena(session, task, now())
    await session.flush()
    return task


async def fund_task(session: AsyncSession, funder: User, task_id: str, amount_cents: int) -> Task:
    """donate: anyone adds to the bounty of an open task, from their own balance into its escrow."""
    task = await lock_task(session, task_id)
    if task is None or task.status == TaskStatus.DRAFT:
        raise not_found("task", task_id)
    if task.module != Module.DONATE.value:
        raise conflict(ErrorCode.NOT_DONATE, f"Only donate tasks take funding; task {task.id} is a {task.module} task.",
                       currentStatus=task.status)
    require_open(task, "fund")
    if amount_cents <= 0:
        raise invalid("amount must be above zero.", [{"field": "amount", "message": "must be above zero"}])
    await ledger.transfer(session, ledger.user_account(funder.id), ledger.escrow_account(task.id), amount_cents,
                          ledger.EntryKind.FUND, task_id=task.id, memo="donation")
    task.bounty_cents += amount_cents
    task.updated_at = now()
    await session.flush()
    return task
