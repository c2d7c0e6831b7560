"""Tasks as drafts, and every read of the marketplace: lists, the review queue, the leaderboard (what
the rows look like on the wire: :mod:`bountyboard.market.views`).

State changes live in the flows that :mod:`bountyboard.market.transitions` lists; the functions here
take a session and a user or actor, so the site can call them without HTTP.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.accounts.auth import Actor
from bountyboard.accounts.models import Bot, User
from bountyboard.accounts.scopes import Role
from bountyboard.checks.spec import ChecksSpec
from bountyboard.clock import as_utc, now, rfc3339
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem, invalid, not_found
from bountyboard.ids import new_id
from bountyboard.ledger.service import from_cents, to_cents
from bountyboard.market import checking, locks, permissions, transitions
from bountyboard.market.deadlines import default_timeout, review_rule_errors
from bountyboard.market.models import Appeal, Claim, ClaimStatus, ReviewState, Submission, Task, TaskStatus
from bountyboard.market.modules import Module, task_rule_errors
from bountyboard.market.schemas import (
    AgentClaimStatus,
    AgentTask,
    AppealOut,
    ArenaResult,
    BotReputation,
    ClaimDetail,
    JudgeTarget,
    Leaderboard,
    Ranking,
    TaskCreate,
    TaskUpdate,
)
from bountyboard.market.slots import as_of
from bountyboard.market.views import appeal_out, claim_details, claim_statuses, submission_out, task_out
from bountyboard.pagination import Page, PageParams

# Wire field -> column, for the fields that are stored as given.
_PLAIN_FIELDS = {
    "module": "module", "title": "title", "description": "description", "maxClaims": "max_claims",
    "claimTtlSeconds": "claim_ttl_seconds", "deadline": "deadline", "deliverables": "deliverables",
    "repositoryUrl": "repository_url", "sourceLanguage": "source_language", "targetLanguage": "target_language",
    "rubric": "rubric", "targetClaimId": "target_claim_id", "checks": "checks",
    "reviewWithinHours": "review_within_hours", "onReviewTimeout": "on_review_timeout",
    "minReputation": "min_reputation", "minCompleted": "min_completed",
}
_TASK_COLUMNS = (*_PLAIN_FIELDS.values(), "bounty_cents", "payout_split", "claim_bond_cents")
_REQUIRED_FIELDS = ("module", "title", "description", "bountyAmount", "maxClaims", "deliverables")
PUBLIC_TASK_STATUSES = (TaskStatus.PUBLISHED, TaskStatus.IN_PROGRESS, TaskStatus.COMPLETED, TaskStatus.CANCELLED,
                        TaskStatus.EXPIRED)

async def _page(session: AsyncSession, query: Any, order: Sequence[Any], params: PageParams) -> tuple[list[Any], int]:
    total = int(await session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0)
    rows = (await session.execute(query.order_by(*order).offset(params.offset).limit(params.pageSize))).scalars()
    return list(rows), total


# Drafts -------------------------------------------------------------------------------------------

def _require_publisher(user: User) -> None:
    if not user.role.acts_as(Role.PUBLISHER):
        raise Problem(403, ErrorCode.ROLE_REQUIRED, "Publishing tasks is for accounts with the role publisher.")


def _columns(fields: dict[str, Any]) -> dict[str, Any]:
    """Wire fields (as given) -> column values, converting money and shares to integers."""
    columns = {column: fields[name] for name, column in _PLAIN_FIELDS.items() if name in fields}
    if "bountyAmount" in fields:
        columns["bounty_cents"] = to_cents(fields["bountyAmount"], "bountyAmount")
    if "claimBond" in fields:
        columns["claim_bond_cents"] = to_cents(fields["claimBond"] or 0, "claimBond")
    if "payoutSplit" in fields:
        split = fields["payoutSplit"]
        if split is None:
            columns["payout_split"] = None
        else:
            bps = [Decimal(share) * 10_000 for share in split]
            if any(value != value.to_integral_value() for value in bps):
                raise invalid("payoutSplit shares have at most four decimal places.",
                              [{"field": "payoutSplit", "message": "at most four decimal places"}],
                              code=ErrorCode.INVALID_TASK)
            columns["payout_split"] = [int(value) for value in bps]
    if columns.get("deadline") is not None:
        columns["deadline"] = as_utc(columns["deadline"])
    if columns.get("checks") is not None:  # stored whole, defaults included (an edit dumps only what was set)
        columns["checks"] = ChecksSpec.model_validate(columns["checks"]).model_dump(mode="json")
    if "deliverables" in columns:
        deliverables = [str(item).strip() for item in columns["deliverables"] or []]
        if any(not item or len(item) > 500 for item in deliverables):
            raise invalid("Each deliverable is 1 to 500 characters.",
                          [{"field": "deliverables", "message": "1 to 500 characters each"}],
                          code=ErrorCode.INVALID_TASK)
        columns["deliverables"] = deliverables
    if "module" in columns:
        columns["module"] = Module(columns["module"]).value
    return columns


async def _check_task(session: AsyncSession, publisher: User, columns: dict[str, Any], task_id: str | None) -> None:
    columns["on_review_timeout"] = columns.get("on_review_timeout") or default_timeout(columns["module"])
    errors = task_rule_errors(Module(columns["module"]), columns) + review_rule_errors(columns)
    deadline = columns.get("deadline")
    if deadline is not None and deadline <= now():
        errors.append({"field": "deadline", "message": "must be in the future"})
    verifier = (columns.get("checks") or {}).get("verifier")
    lease = get_settings().check_lease_seconds
    longest = lease - min(60.0, lease / 4)  # a check run ends within its runner's lease, with time to record it
    if verifier and verifier["trials"] * verifier["timeoutSec"] > longest:
        errors.append({"field": "checks.verifier", "message": f"trials x timeoutSec must stay within {longest:g} s"})
    if verifier and verifier.get("archiveKey") and not await checking.is_archive_of(
            session, verifier["archiveKey"], task_id):
        errors.append({"field": "checks.verifier.archiveKey",
                       "message": "no archive of this task has this key (PUT /v1/tasks/{id}/verifier-archive)"})
    target_id = columns.get("target_claim_id")
    if columns["module"] == Module.JUDGE.value and target_id:
        target = await session.get(Claim, target_id)
        target_task = await session.get(Task, target.task_id) if target else None
        if target is None or target_task is None or target.task_id == task_id or not (
                permissions.may_review(publisher, target_task)):
            errors.append({"field": "targetClaimId", "message": "no such claim among the caller's tasks"})
        elif target.submitted_at is None:
            errors.append({"field": "targetClaimId", "message": "the claim has no submission to judge"})
    if errors:
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise invalid(f"The task breaks the rules of its module: {summary}", errors, code=ErrorCode.INVALID_TASK)


async def create_task(session: AsyncSession, publisher: User, data: TaskCreate) -> Task:
    """A new task, as a draft (publish it to escrow the bounty and open it to agents)."""
    _require_publisher(publisher)
    columns = _columns(data.model_dump(exclude_unset=False))
    if columns.get("claim_ttl_seconds") is None:
        columns["claim_ttl_seconds"] = get_settings().default_claim_ttl_seconds
    await _check_task(session, publisher, columns, None)
    current = now()
    task = Task(id=new_id("task"), publisher_id=publisher.id, status=TaskStatus.DRAFT, slots_taken=0,
                created_at=current, updated_at=current, **columns)
    session.add(task)
    await session.flush()
    return task


async def update_task(session: AsyncSession, publisher: User, task_id: str, data: TaskUpdate) -> Task:
    """Edit a draft; a published task is fixed (409 with its status)."""
    task = await locks.lock_task(session, task_id)
    if task is None:
        raise not_found("task", task_id)
    permissions.require_task_owner(publisher, task)
    if task.status != TaskStatus.DRAFT:
        raise transitions.task_conflict(task, "edit")
    fields = data.model_dump(exclude_unset=True)
    cleared = sorted(name for name in _REQUIRED_FIELDS if name in fields and fields[name] is None)
    if cleared:
        raise invalid(f"These fields cannot be cleared: {', '.join(cleared)}.",
                      [{"field": name, "message": "cannot be null"} for name in cleared], code=ErrorCode.INVALID_TASK)
    changes = _columns(fields)
    if changes.get("claim_ttl_seconds", 0) is None:
        changes["claim_ttl_seconds"] = get_settings().default_claim_ttl_seconds
    merged = {column: getattr(task, column) for column in _TASK_COLUMNS} | changes
    await _check_task(session, publisher, merged, task.id)
    for column in changes:
        setattr(task, column, merged[column])  # as checked (defaults filled in)
    task.updated_at = now()
    await session.flush()
    return task


# Reads --------------------------------------------------------------------------------------------

async def get_task_for(session: AsyncSession, user: User, task_id: str) -> Task:
    """A task as anyone sees it: every task but drafts, and drafts to their publisher."""
    task = await session.get(Task, task_id)
    if task is None or (task.status == TaskStatus.DRAFT and task.publisher_id != user.id
                        and user.role is not Role.ADMIN):
        raise not_found("task", task_id)
    return task


async def get_own_task(session: AsyncSession, publisher: User, task_id: str) -> Task:
    task = await session.get(Task, task_id)
    if task is None:
        raise not_found("task", task_id)
    permissions.require_task_owner(publisher, task)
    return task


def _task_filters(module: Module | None, status: TaskStatus | None) -> list[ColumnElement[bool]]:
    filters = []
    if module is not None:
        filters.append(Task.module == module.value)
    if status is not None:
        filters.append(Task.status == status)
    return filters


async def list_publisher_tasks(session: AsyncSession, publisher: User, module: Module | None,
                               status: TaskStatus | None, params: PageParams) -> Page[AgentTask]:
    query = select(Task).where(Task.publisher_id == publisher.id, *_task_filters(module, status))
    rows, total = await _page(session, query, (Task.created_at.desc(), Task.id.desc()), params)
    return Page.of([task_out(task) for task in rows], params, total)


async def list_task_claims(session: AsyncSession, publisher: User, task_id: str,
                           params: PageParams) -> Page[ClaimDetail]:
    task = await get_own_task(session, publisher, task_id)
    rows, total = await _page(session, select(Claim).where(Claim.task_id == task.id),
                              (Claim.created_at, Claim.id), params)
    return Page.of(await claim_details(session, rows), params, total)


def holder_of(actor: Actor) -> tuple[InstrumentedAttribute[Any], str]:
    """What a caller's claims are: its bot's, or for a user key all of the operator's (the column of
    ``Claim`` that says so, and its value)."""
    return (Claim.bot_id, actor.bot.id) if actor.bot is not None else (Claim.operator_id, actor.user_id)


def holder_filter(actor: Actor) -> ColumnElement[bool]:
    column, holder = holder_of(actor)
    return column == holder


async def get_claim_for(session: AsyncSession, actor: Actor, claim_id: str) -> AgentClaimStatus:
    claim = await session.scalar(select(Claim).where(Claim.id == claim_id, holder_filter(actor)))
    if claim is None:
        raise not_found("claim", claim_id)
    return (await claim_statuses(session, [as_of(claim, now())]))[0]


def _reviewable(reviewer: User) -> list[ColumnElement[bool]]:
    if reviewer.role.acts_as(Role.REVIEWER):
        return [Claim.operator_id != reviewer.id]
    return [Task.publisher_id == reviewer.id]


def _escalation(reviewer: User, escalated_at: Any, escalated: bool | None) -> list[ColumnElement[bool]]:
    """Escalated reviews and appeals are the admins' queue (market.deadlines): only admins see them; an
    admin may ask for them only (``escalated=true``) or for the others."""
    if not permissions.is_admin(reviewer) or escalated is False:
        return [escalated_at.is_(None)]
    return [escalated_at.is_not(None)] if escalated else []


async def review_queue(session: AsyncSession, reviewer: User, module: Module | None, params: PageParams,
                       escalated: bool | None = None, checks: str | None = None,
                       order: str = "submitted") -> Page[ClaimDetail]:
    """Submissions awaiting a decision, oldest first (or by check outcome, ``checking.by_checks``)."""
    query = select(Claim).join(Task, Task.id == Claim.task_id).where(
        Claim.status == ClaimStatus.SUBMITTED, *_reviewable(reviewer),
        *_escalation(reviewer, Claim.escalated_at, escalated))
    if module is not None:
        query = query.where(Task.module == module.value)
    query, ordering = checking.by_checks(query, checks, order)
    rows, total = await _page(session, query, (*ordering, Claim.submitted_at, Claim.id), params)
    return Page.of(await claim_details(session, rows), params, total)


async def list_appeals(session: AsyncSession, reviewer: User, status: str | None,
                       params: PageParams, escalated: bool | None = None) -> Page[AppealOut]:
    query = select(Appeal).join(Claim, Claim.id == Appeal.claim_id).join(Task, Task.id == Appeal.task_id).where(
        *_reviewable(reviewer), *_escalation(reviewer, Appeal.escalated_at, escalated))
    if status is not None:
        query = query.where(Appeal.status == status)
    rows, total = await _page(session, query, (Appeal.created_at, Appeal.id), params)
    return Page.of([appeal_out(appeal) for appeal in rows], params, total)


async def judge_target(session: AsyncSession, actor: Actor, task_id: str) -> JudgeTarget:
    """The submission a judge task evaluates: for its claimants, its publisher and reviewers."""
    task = await get_task_for(session, actor.user, task_id)
    if task.module != Module.JUDGE.value or task.target_claim_id is None:
        raise not_found("judge task", task_id)
    claimant = await session.scalar(select(Claim.id).where(Claim.task_id == task.id, holder_filter(actor)).limit(1))
    if claimant is None and not permissions.may_review(actor.user, task):
        raise Problem(403, ErrorCode.CLAIM_REQUIRED, "Claim the judge task to read the submission it evaluates.")
    target = await session.get(Claim, task.target_claim_id)
    submission = await session.scalar(select(Submission).where(Submission.claim_id == task.target_claim_id)
                                      .order_by(Submission.attempt.desc()).limit(1))
    target_task = await session.get(Task, target.task_id) if target else None
    if target is None or submission is None or target_task is None:
        raise not_found("judged submission", task.target_claim_id)
    return JudgeTarget(taskId=task.id, targetClaimId=target.id, targetTaskId=target_task.id,
                       targetModule=Module(target_task.module), targetTitle=target_task.title,
                       targetDescription=target_task.description, submission=submission_out(submission))


async def leaderboard(session: AsyncSession, limit: int) -> Leaderboard:
    """Per-bot reputation (accepted, rejected, appeals won, earnings) and the latest closed arenas."""
    accepted = func.sum(case((Claim.status == ClaimStatus.ACCEPTED, 1), else_=0))
    rejected = func.sum(case((Claim.status == ClaimStatus.REJECTED, 1), else_=0))
    won = func.sum(case((Claim.review_state == ReviewState.APPEAL_UPHELD, 1), else_=0))
    earned = func.sum(Claim.payout_cents)
    rows = (await session.execute(
        select(Bot.id, Bot.name, Bot.operator_id, accepted, rejected, won, earned)
        .join(Claim, Claim.bot_id == Bot.id).group_by(Bot.id, Bot.name, Bot.operator_id)
        .order_by(accepted.desc(), earned.desc(), Bot.id).limit(limit)
    )).all()
    bots = [BotReputation(botId=r[0], name=r[1], operatorId=r[2], accepted=int(r[3] or 0), rejected=int(r[4] or 0),
                          appealsWon=int(r[5] or 0), earned=from_cents(int(r[6] or 0))) for r in rows]
    arenas = list((await session.execute(
        select(Task).where(Task.module == Module.ARENA.value, Task.status == TaskStatus.COMPLETED)
        .order_by(Task.ended_at.desc(), Task.id.desc()).limit(limit)
    )).scalars())
    ranked = list((await session.execute(
        select(Claim).where(Claim.task_id.in_([t.id for t in arenas]), Claim.rank.is_not(None))
        .order_by(Claim.rank)
    )).scalars())
    results = [ArenaResult(
        taskId=task.id, title=task.title, endedAt=rfc3339(task.ended_at), bountyAmount=from_cents(task.bounty_cents),
        rankings=[Ranking(rank=c.rank or 0, claimId=c.id, botId=c.bot_id, operatorId=c.operator_id, score=c.score,
                          payoutAmount=from_cents(c.payout_cents)) for c in ranked if c.task_id == task.id],
    ) for task in arenas]
    return Leaderboard(bots=bots, arenas=results)
