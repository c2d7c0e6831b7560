"""Row locks of the marketplace, taken in one order so that no two transitions of a task interleave.

The task row is locked first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite serialises writers
with ``BEGIN IMMEDIATE``, see :mod:`bountyboard.storage.unit_of_work`). What tasks share is locked
after it, always in the same order: the holder (bot or user row), the task's claims, the ledger accounts, and last the
event counter (every ``emit`` comes after every money movement of its transaction).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.accounts.models import Bot, User
from bountyboard.errors import not_found
from bountyboard.market.models import Claim, Task
from bountyboard.storage.unit_of_work import core


def locking(statement: Select[*tuple[Any, ...]], skip_locked: bool = False) -> Select[*tuple[Any, ...]]:
    """``statement`` as a locking read whose rows replace what the session holds of them."""
    return statement.with_for_update(skip_locked=skip_locked).execution_options(populate_existing=True)


# Built once with bound parameters: a claim or a submission runs several of these under the task's lock,
# and building a statement costs more than SQLite takes to run it (docs/performance.md).
_TASK_BY_ID = select(Task).where(Task.id == bindparam("task_id"))
_TASK = locking(_TASK_BY_ID)
_TASK_UNLESS_BUSY = locking(_TASK_BY_ID, skip_locked=True)
# A claim and its task in one statement, one round trip under the lock: PostgreSQL locks a row of each, in
# the order of the FROM list (the task first, as everywhere), each at its newest version once locked.
_CLAIM_WITH_TASK = locking(select(Task, Claim).join(Claim, Claim.task_id == Task.id)
                           .where(Claim.id == bindparam("claim_id")))
HOLDING = select(Claim).where(Claim.task_id == bindparam("task_id"), Claim.holds_slot.is_(True))
"""A task's slot-holding claims (parameter ``task_id``); locked and in order by :func:`holding_claims`."""
_HOLDING_IN_ORDER = locking(HOLDING.order_by(Claim.created_at))


async def lock_task(session: AsyncSession, task_id: str, *, skip_locked: bool = False) -> Task | None:
    statement = _TASK_UNLESS_BUSY if skip_locked else _TASK
    return (await session.execute(statement, {"task_id": task_id})).scalar_one_or_none()


async def locked_claim(session: AsyncSession, claim_id: str) -> tuple[Task, Claim]:
    """The claim and its task, both locked (task first, as everywhere)."""
    row = (await session.execute(_CLAIM_WITH_TASK, {"claim_id": claim_id})).one_or_none()
    if row is None:
        raise not_found("claim", claim_id)
    return row.Task, row.Claim


async def holding_claims(session: AsyncSession, task_id: str) -> list[Claim]:
    """The task's claims that hold a slot, oldest first, locked."""
    return list((await session.execute(_HOLDING_IN_ORDER, {"task_id": task_id})).scalars())


# The limit alone, not the bot's ORM object: nothing else of the row is read under the lock. Core
# statements (``core``): no flow changes these rows, so no pending change needs flushing before them.
_BOT = select(Bot.max_active_claims).where(Bot.id == bindparam("bot_id")).with_for_update()
_USER = select(User.id).where(User.id == bindparam("user_id")).with_for_update()


async def lock_holder(session: AsyncSession, actor: Actor) -> int:
    """Lock the claimant's row (its claims on other tasks race on it); returns its active-claim limit."""
    if actor.bot is not None:
        return int((await core(session, _BOT, {"bot_id": actor.bot.id})).scalar_one())
    await core(session, _USER, {"user_id": actor.user_id})
    return 1
