"""The periodic sweep (run by :mod:`bountyboard.worker`): what time decides for claims and tasks."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.clock import now
from bountyboard.market.deadlines import overdue_appeals, overdue_reviews, settle_reviews
from bountyboard.market.locks import lock_task
from bountyboard.market.models import Appeal, Claim, ClaimStatus, Task
from bountyboard.market.modules import Module
from bountyboard.market.payouts import close_arena
from bountyboard.market.slots import lapse_task, overdue_holding
from bountyboard.market.task_flows import end_task, pending_reviews
from bountyboard.market.transitions import TASK_TRANSITIONS, TaskMove, task_allows
from bountyboard.storage.engine import get_database

SWEEP_BATCH = 100


async def _expire_task(session: AsyncSession, task: Task, current: datetime) -> bool:
    """A task past its deadline ends once no decision is pending; an arena with winners is closed."""
    if not task_allows(task, TaskMove.EXPIRE) or not task.deadline \
            or task.deadline > current or await pending_reviews(session, task.id):
        return False
    has_winners = await session.scalar(select(Claim.id).where(
        Claim.task_id == task.id, Claim.status == ClaimStatus.ACCEPTED).limit(1))
    if task.module == Module.ARENA.value and has_winners:
        await close_arena(session, task, current)
    else:
        await end_task(session, task, TaskMove.EXPIRE, current)
    return True


async def sweep() -> int:
    """Expire overdue claims, close lapsed appeal windows, settle reviews and appeals past their deadlines
    (market.deadlines) and end tasks past their deadline.

    Safe in several processes at once: each task is handled in its own transaction under its row
    lock, taken with SKIP LOCKED so a task busy elsewhere waits for the next tick.
    """
    current = now()
    sessionmaker = get_database().sessionmaker
    async with sessionmaker() as session:
        lapsed = set((await session.execute(select(Claim.task_id).where(
            Claim.holds_slot.is_(True), overdue_holding(current),
        ).limit(SWEEP_BATCH))).scalars())
        ending = set((await session.execute(select(Task.id).where(
            Task.status.in_(TASK_TRANSITIONS[TaskMove.EXPIRE].sources),
            Task.deadline <= current,
        ).limit(SWEEP_BATCH))).scalars())
        reviewing = set((await session.execute(select(Claim.task_id).where(overdue_reviews(current))
                                               .limit(SWEEP_BATCH))).scalars())
        reviewing |= set((await session.execute(select(Appeal.task_id).where(overdue_appeals(current))
                                                .limit(SWEEP_BATCH))).scalars())
    handled = 0
    for task_id in sorted(lapsed | ending | reviewing):
        async with sessionmaker() as session:
            task = await lock_task(session, task_id, skip_locked=True)
            if task is None:
                continue
            # A review accepted by its deadline is decided before the task's own deadline ends it. Once this
            # has written an event the task has a pending review or has completed: the expiry below then
            # moves no money (lock order).
            await settle_reviews(session, task, current)
            # Ending the task moves money before any event is written, so it goes first (lock order).
            if not await _expire_task(session, task, current):
                await lapse_task(session, task, current)
            await session.commit()
            handled += 1
    return handled
