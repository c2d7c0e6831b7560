"""Who may act on a task or a claim, and the locked rows a flow starts from once the caller may.

Someone who may not see a row gets the same 404 as for a row that does not exist; 403 is kept for
callers who see the row but act with the wrong key or on their own work.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import Role
from bountyboard.errors import ErrorCode, Problem, not_found
from bountyboard.market.locks import lock_task, locked_claim
from bountyboard.market.models import Claim, Task


def is_admin(user: User) -> bool:
    return user.role is Role.ADMIN


def require_task_owner(user: User, task: Task) -> None:
    if task.publisher_id != user.id and not is_admin(user):
        raise not_found("task", task.id)


def may_review(user: User, task: Task) -> bool:
    return user.role.acts_as(Role.REVIEWER) or task.publisher_id == user.id


def require_holder(actor: Actor, claim: Claim) -> None:
    """Only the holder acts on a claim: its bot (bot key) or, for a bot-less claim, its operator."""
    holder = claim.bot_id == actor.bot_id if claim.bot_id else actor.bot is None and claim.operator_id == actor.user_id
    if holder:
        return
    if claim.operator_id == actor.user_id and actor.bot is None:
        raise Problem(403, ErrorCode.NOT_CLAIM_HOLDER,
                      f"Claim {claim.id} is held by bot {claim.bot_id}; act with its key.")
    raise not_found("claim", claim.id)


async def owned_task(session: AsyncSession, publisher: User, task_id: str) -> Task:
    """The publisher's own task (or any, for an admin), locked."""
    task = await lock_task(session, task_id)
    if task is None:
        raise not_found("task", task_id)
    require_task_owner(publisher, task)
    return task


async def held_claim(session: AsyncSession, actor: Actor, claim_id: str) -> tuple[Task, Claim]:
    """A claim the caller holds, with its task, both locked."""
    task, claim = await locked_claim(session, claim_id)
    require_holder(actor, claim)
    return task, claim


async def operated_claim(session: AsyncSession, actor: Actor, claim_id: str) -> tuple[Task, Claim]:
    """A claim of the caller's own or of one of its bots (the operator answers for them), both locked."""
    task, claim = await locked_claim(session, claim_id)
    if claim.operator_id != actor.user_id:
        raise not_found("claim", claim_id)
    return task, claim


async def reviewable_claim(session: AsyncSession, reviewer: User, claim_id: str) -> tuple[Task, Claim]:
    """A claim the caller may review: a reviewer's or admin's, or one on the publisher's task; never one's own."""
    task, claim = await locked_claim(session, claim_id)
    if not may_review(reviewer, task):
        raise not_found("claim", claim.id)
    if claim.operator_id == reviewer.id:
        raise Problem(403, ErrorCode.OWN_CLAIM, "Nobody reviews their own claim.")
    return task, claim


def require_independent(resolver: User, claim: Claim) -> None:
    """An appeal is judged by someone other than the reviewer whose rejection it contests (admins too)."""
    if claim.reviewer_id is not None and claim.reviewer_id == resolver.id:
        raise Problem(403, ErrorCode.CONFLICT_OF_INTEREST,
                      f"You rejected claim {claim.id}; its appeal is resolved by another reviewer of the task "
                      "or an admin.")


def require_admin_if_escalated(user: User, escalated_at: datetime | None, what: str) -> None:
    """A review or an appeal that outlived its deadline is in the admins' queue: only an admin decides it."""
    if escalated_at is not None and not is_admin(user):
        raise Problem(403, ErrorCode.ROLE_REQUIRED, f"{what} was escalated to the admins at its deadline; "
                                                     "only an admin decides it now.")
