"""What an agent does with a claim before submitting: take it, keep it alive, give it back.

Submitting is :mod:`bountyboard.market.submissions`; reviews and appeals are :mod:`bountyboard.market.review`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.accounts.auth import Actor
from bountyboard.clock import now, rfc3339
from bountyboard.errors import ErrorCode, conflict, not_found
from bountyboard.events.kinds import EventKind, TaskClaimedData
from bountyboard.events.service import emit
from bountyboard.ids import new_id
from bountyboard.market.bonds import bond_of, hold_bond
from bountyboard.market.eligibility import require_eligible
from bountyboard.market.locks import lock_holder, lock_task
from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus
from bountyboard.market.modules import Module, is_claimable
from bountyboard.market.permissions import held_claim
from bountyboard.market.slots import check_claim_now, end_claim, lapse_task, take_slot, visibility
from bountyboard.market.transitions import ClaimMove, move_claim, task_conflict
from bountyboard.storage.unit_of_work import insert_new, write_changes


def _holder_checks(holder: ColumnElement[bool]) -> Select[Any]:
    """The holder's active claims and whether it holds a slot of the task, in one statement."""
    active_claims = select(func.count()).select_from(Claim).where(
        holder, Claim.status == ClaimStatus.ACTIVE, Claim.expires_at > bindparam("current")).scalar_subquery()
    holds_a_slot = exists().where(Claim.task_id == bindparam("task_id"), holder, Claim.holds_slot.is_(True))
    return select(active_claims, holds_a_slot)


# A claimant's claims: its bot's, or for a user key the operator's own claims without a bot.
_BOT_HOLDER_CHECKS = _holder_checks(Claim.bot_id == bindparam("holder"))
_USER_HOLDER_CHECKS = _holder_checks(Claim.bot_id.is_(None) & (Claim.operator_id == bindparam("holder")))


async def _check_holder(session: AsyncSession, actor: Actor, task: Task, limit: int, current: datetime) -> None:
    """A bot holds at most ``maxActiveClaims`` active claims (an operator with a user key, one), and one
    slot of a task. Both asked in one statement: the task is locked until this transaction ends."""
    checks, holder = (_BOT_HOLDER_CHECKS, actor.bot.id) if actor.bot is not None else (_USER_HOLDER_CHECKS,
                                                                                          actor.user_id)
    active, already = (await session.execute(checks, {"holder": holder, "task_id": task.id,
                                                      "current": current})).one()
    if active >= limit:
        raise conflict(ErrorCode.ACTIVE_CLAIM_LIMIT,
                       f"The caller already holds {active} active claim(s); the limit is {limit}. "
                       "Submit or release one first.", activeClaims=active, limit=limit)
    if already:
        raise conflict(ErrorCode.ALREADY_CLAIMED, f"The caller already holds a claim on task {task.id}.",
                       currentStatus=task.status)


async def claim_task(session: AsyncSession, actor: Actor, task_id: str) -> Claim:
    """Take a free slot of a published task: the claim is ``active`` until its TTL runs out."""
    task = await lock_task(session, task_id)
    if task is None or task.status == TaskStatus.DRAFT:
        raise not_found("task", task_id)
    if not is_claimable(Module(task.module)):
        raise conflict(ErrorCode.MODULE_NOT_CLAIMABLE, "show tasks are a showcase and cannot be claimed.",
                       currentStatus=task.status)
    if task.publisher_id == actor.user_id:
        raise conflict(ErrorCode.OWN_TASK, "A publisher cannot claim their own task.", currentStatus=task.status)
    current = now()
    limit = await lock_holder(session, actor)
    await lapse_task(session, task, current)
    if task.status == TaskStatus.IN_PROGRESS:  # what lapse_task found overdue stays lapsed
        raise task_conflict(task, "claim", ErrorCode.NO_SLOT_FREE).keeping_writes()
    if task.status != TaskStatus.PUBLISHED:
        raise task_conflict(task, "claim")
    if task.deadline is not None and task.deadline <= current:
        raise conflict(ErrorCode.DEADLINE_PASSED, f"Task {task.id} passed its deadline.", currentStatus=task.status)
    await require_eligible(session, actor, task, current)
    await _check_holder(session, actor, task, limit, current)
    claim = Claim(
        id=new_id("clm"), task_id=task.id, bot_id=actor.bot_id, operator_id=actor.user_id,
        status=ClaimStatus.ACTIVE, review_state=ReviewState.NOT_SUBMITTED, holds_slot=True,
        created_at=current, expires_at=current + timedelta(seconds=task.claim_ttl_seconds), payout_cents=0,
        **bond_of(task),
    )
    await insert_new(session, claim)  # read below, never changed: no unit of work needed
    take_slot(task)
    task.updated_at = current
    await write_changes(session, task)
    await hold_bond(session, task, claim)
    await emit(session, EventKind.TASK_CLAIMED, TaskClaimedData(
        taskId=task.id, claimId=claim.id, botId=claim.bot_id, operatorId=claim.operator_id,
        module=task.module, status=claim.status, expiresAt=rfc3339(claim.expires_at),
    ), **visibility(task, claim))
    await session.flush()
    return claim


async def working_claim(session: AsyncSession, actor: Actor, claim_id: str, move: ClaimMove) -> tuple[Task, Claim]:
    """The caller's claim, locked, when ``move`` is allowed now (an overdue claim lapses and is refused)."""
    task, claim = await held_claim(session, actor, claim_id)
    await check_claim_now(session, task, claim, move)
    return task, claim


async def heartbeat(session: AsyncSession, actor: Actor, claim_id: str) -> Claim:
    """Extend an active claim's TTL from now."""
    task, claim = await working_claim(session, actor, claim_id, ClaimMove.HEARTBEAT)
    move_claim(claim, ClaimMove.HEARTBEAT)
    claim.expires_at = now() + timedelta(seconds=task.claim_ttl_seconds)
    await session.flush()
    return claim


async def release_claim(session: AsyncSession, actor: Actor, claim_id: str) -> Claim:
    """active -> released: the holder gives the slot back."""
    task, claim = await working_claim(session, actor, claim_id, ClaimMove.RELEASE)
    await end_claim(session, task, claim, ClaimMove.RELEASE, now())
    await session.flush()
    return claim
