"""The slots claims hold on their task, and what time decides for a claim.

A claim holds a slot while it is active, submitted, accepted, or rejected with its appeal window
open; a task with every slot taken is in progress. Time ends a claim's hold twice: its TTL runs out
(active -> expired) or its appeal window closes (the rejection stands and the slot frees).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, inspect, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.clock import now
from bountyboard.errors import ErrorCode
from bountyboard.events.kinds import ClaimEndedData, EventKind
from bountyboard.events.service import emit
from bountyboard.market.bonds import settle_bond
from bountyboard.market.locks import HOLDING, holding_claims, locking
from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus
from bountyboard.market.transitions import (
    CLAIM_TRANSITIONS,
    ClaimMove,
    TaskMove,
    check_claim,
    claim_conflict,
    move_claim,
    move_task,
)


def take_slot(task: Task) -> None:
    task.slots_taken += 1
    if task.slots_taken >= task.max_claims:
        move_task(task, TaskMove.FILL)


def free_slot(task: Task, claim: Claim, current: datetime) -> None:
    """The claim stops holding its slot: it has ended (released, expired, or its rejection stands)."""
    if not claim.holds_slot:
        return
    claim.holds_slot = False
    claim.ended_at = current  # starts the retention of a rejected claim's files
    task.slots_taken -= 1
    if task.status == TaskStatus.IN_PROGRESS and task.slots_taken < task.max_claims:
        move_task(task, TaskMove.REOPEN)


def visibility(task: Task, claim: Claim) -> dict[str, Any]:
    """Who sees a claim's events: its bot, its operator and the task's publisher."""
    return {"bot_id": claim.bot_id, "operator_id": claim.operator_id, "publisher_id": task.publisher_id}


async def end_claim(session: AsyncSession, task: Task, claim: Claim, move: ClaimMove, current: datetime) -> None:
    """active -> released | expired: the slot is freed; a bond is forfeited unless the task's end expired the
    claim before its TTL ran out (the money moves before the event: market.locks)."""
    forfeit = move == ClaimMove.RELEASE or ttl_over(claim, current)
    move_claim(claim, move)
    free_slot(task, claim, current)
    await settle_bond(session, task, claim, forfeit=forfeit)
    kind = EventKind.CLAIM_RELEASED if move == ClaimMove.RELEASE else EventKind.CLAIM_EXPIRED
    await emit(session, kind, ClaimEndedData(
        taskId=task.id, claimId=claim.id, botId=claim.bot_id, operatorId=claim.operator_id,
        status=claim.status, module=task.module,
    ), **visibility(task, claim))


def ttl_over(claim: Claim, current: datetime) -> bool:
    return claim.status == ClaimStatus.ACTIVE and claim.expires_at is not None and claim.expires_at <= current


def window_closed(claim: Claim, current: datetime) -> bool:
    return (claim.status == ClaimStatus.REJECTED and claim.review_state == ReviewState.REJECTED
            and claim.appeal_deadline is not None and claim.appeal_deadline <= current)


def overdue(claim: Claim, current: datetime) -> bool:
    """Time has moved this claim on, and its stored state does not say so yet."""
    return ttl_over(claim, current) or (claim.holds_slot and window_closed(claim, current))


def as_of(claim: Claim, current: datetime) -> Claim:
    """The claim as time has moved it on by ``current``, for showing it: a claim past its TTL reads as
    expired, one whose appeal window closed no longer holds its slot. A pure function: the stored state
    moves only with a write flow (``lapse``) or the sweep (``market.scheduled``). The copy is transient
    (no session knows it)."""
    if not overdue(claim, current):
        return claim
    seen = Claim(**{column.key: getattr(claim, column.key) for column in inspect(Claim).column_attrs})
    if ttl_over(claim, current):
        seen.status = ClaimStatus.EXPIRED
    seen.holds_slot = False
    return seen


def overdue_holding(current: datetime | ColumnElement[datetime]) -> ColumnElement[bool]:
    """``overdue`` as a filter of slot-holding claims, so that a claim on a task with many holders reads
    (and locks) only the few that time has moved on."""
    return or_(and_(Claim.status == ClaimStatus.ACTIVE, Claim.expires_at <= current),
               and_(Claim.status == ClaimStatus.REJECTED, Claim.review_state == ReviewState.REJECTED,
                    Claim.appeal_deadline <= current))


async def lapse(session: AsyncSession, task: Task, claim: Claim, current: datetime) -> bool:
    """Apply what time has decided for one claim: TTL expiry or the end of its appeal window."""
    if ttl_over(claim, current):
        await end_claim(session, task, claim, ClaimMove.EXPIRE, current)
        return True
    if claim.holds_slot and window_closed(claim, current):
        free_slot(task, claim, current)
        return True
    return False


_OVERDUE_HOLDING = locking(HOLDING.where(overdue_holding(bindparam("current"))).order_by(Claim.created_at))


async def lapse_task(session: AsyncSession, task: Task, current: datetime) -> None:
    """Apply what time has decided for the task's claims: only those it moved on are read and locked."""
    overdue_claims = (await session.execute(_OVERDUE_HOLDING, {"task_id": task.id, "current": current})).scalars()
    for claim in overdue_claims.all():
        await lapse(session, task, claim, current)


async def check_claim_now(session: AsyncSession, task: Task, claim: Claim, move: ClaimMove) -> None:
    """Refuse ``move`` unless the table allows it and time has not ended the claim's hold.

    An overdue claim is expired now before the caller's move is refused; the refusal keeps that write
    (``Problem.keeping_writes``: the unit of work commits it before answering).
    """
    check_claim(claim, move)
    if await lapse(session, task, claim, now()):
        raise claim_conflict(claim, CLAIM_TRANSITIONS[move].verb,
                             ErrorCode.CLAIM_EXPIRED if claim.status == ClaimStatus.EXPIRED
                             else ErrorCode.APPEAL_WINDOW_CLOSED).keeping_writes()


async def wind_up(session: AsyncSession, task: Task, current: datetime) -> None:
    """Before a task ends: active claims expire and open appeal windows close."""
    for claim in await holding_claims(session, task.id):
        if claim.status == ClaimStatus.ACTIVE:
            await end_claim(session, task, claim, ClaimMove.EXPIRE, current)
        elif claim.status == ClaimStatus.REJECTED:
            free_slot(task, claim, current)
