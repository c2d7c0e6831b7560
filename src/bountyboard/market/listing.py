"""The lists agents poll, tasks and their own claims: numbered pages or cursors, and ETags.

The task list is read as Core rows (no ORM objects) straight into ``AgentTask``. Its ETag, like a
task's, names each listed task's version (``tasks.version``, which the database moves at every update
of the row, migration 0016) and its next action, which also moves with the clock when a deadline
passes. A poller that sends the ETag back gets 304 after a narrow query of just those columns.

A page's JSON is kept (``statecache``) per query and per caller standing (its ``eligible`` flags,
market.eligibility; the standing is kept too) and served again while the database is unchanged and no
listed deadline has passed: a poll then costs no query of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.accounts.auth import Actor
from bountyboard.clock import now
from bountyboard.conditional import still_fresh, weak_etag
from bountyboard.errors import invalid
from bountyboard.market.eligibility import Caller, eligibility, eligible_filter
from bountyboard.market.models import Claim, ClaimStatus, Task, TaskStatus
from bountyboard.market.modules import Module
from bountyboard.market.schemas import AgentClaimStatus, AgentTask
from bountyboard.market.service import holder_filter
from bountyboard.market.views import claim_statuses, task_next_action, task_next_action_ends, task_out
from bountyboard.pagination import Cursor, KeysetPage, PageParams
from bountyboard.statecache import StampedCache
from bountyboard.storage.session import SessionSource

_TASK_ORDER = (Task.published_at.desc(), Task.id.desc())
_TASK_COLUMNS = tuple(Task.__table__.columns)
# What a task's ETag is made of: its version, and what its next action is computed from.
_TASK_VERSION_COLUMNS = (Task.id, Task.version, Task.status, Task.module, Task.deadline)
_CLAIM_ORDER = (Claim.created_at.desc(), Claim.id.desc())


@dataclass(frozen=True)
class TaskQuery:
    """One page of the agent task list, as asked for."""

    module: Module | None
    status: TaskStatus
    params: PageParams
    after: Cursor | None
    # For whom the page says ``eligible`` (None: nobody), and whether it lists only what the caller may claim.
    caller: Caller | None = None
    eligible_only: bool = False

    @classmethod
    def of(cls, module: Module | None, status: TaskStatus | None, params: PageParams, after: str | None,
           caller: Caller | None = None, eligible_only: bool = False) -> TaskQuery:
        if status is TaskStatus.DRAFT:
            raise invalid("Drafts are not listed; status is one of published, in_progress, completed, cancelled, "
                          "expired.", [{"field": "status", "message": "drafts are not listed"}])
        return cls(module, status or TaskStatus.PUBLISHED, params, Cursor.decode(after, params) if after else None,
                   caller, eligible_only and caller is not None)

    def _filters(self) -> list[ColumnElement[bool]]:
        # A draft cancelled before publication was never public: it is not listed either.
        filters = [Task.status == self.status, Task.published_at.is_not(None)]
        if self.module is not None:
            filters.append(Task.module == self.module.value)
        if self.eligible_only and self.caller is not None:
            filters.extend(eligible_filter(self.caller, now()))
        return filters

    async def page(self, session: AsyncSession, *columns: Any) -> tuple[list[Any], bool, int]:
        """The page's rows, whether more follow, and the list's total, in one statement when it can be."""
        # Counted on the (status, published_at, id) index alone, without reading a row; as a scalar
        # subquery both databases count once per statement (a window count would read every row).
        count = select(func.count(Task.id)).where(*self._filters()).correlate(None)
        query = select(*columns, count.scalar_subquery().label("listed")).where(*self._filters())
        if self.after is not None:
            query = query.where(self.after.before(Task.published_at, Task.id))
        # One row more than asked for tells whether more follow.
        query = query.order_by(*_TASK_ORDER).offset(self.params.offset).limit(self.params.pageSize + 1)
        rows = list((await session.execute(query)).all())
        more, rows = len(rows) > self.params.pageSize, rows[: self.params.pageSize]
        total = rows[0].listed if rows else await session.scalar(count)
        return rows, more, int(total or 0)

    @property
    def key(self) -> tuple[object, ...]:
        after = (self.after.at, self.after.id) if self.after else None
        caller = self.caller.key if self.caller else None
        return self.module, self.status, self.params.page, self.params.pageSize, after, caller, self.eligible_only

    def etag(self, total: int, rows: list[Any]) -> str:
        return weak_etag([*self.key, total, *map(_task_state, rows)])


def _task_state(task: Any) -> tuple[str, int, str]:
    """What a task's answer shows that can change: every update moves its version; the clock, its next action."""
    return task.id, task.version, task_next_action(task)


def task_etag(task: Task, caller: Caller) -> str:
    """The ETag of one task's answer to ``caller`` (``GET /v1/agent/tasks/{id}``)."""
    return weak_etag(["task", *_task_state(task), *caller.key])


def _next_deadline(rows: list[Any]) -> datetime | None:
    """When the first listed task's next action moves with the clock."""
    return min(filter(None, (task_next_action_ends(row) for row in rows)), default=None)


# Pages as sent (JSON and ETag) by what was asked; or only the ETag, when the narrow query for a
# poller's ``If-None-Match`` was all that was read.
_pages: StampedCache[tuple[object, ...], tuple[bytes | None, str]] = StampedCache(256)


def task_for(row: Any, caller: Caller | None) -> AgentTask:
    """A task (or a Core row of its columns) as answered to ``caller``, with ``eligible`` for it."""
    task = task_out(cast(Task, row))  # a Core row has the attributes task_out reads from a Task
    if caller is not None:
        task.eligible, task.ineligibleReason = eligibility(row, caller, task.nextAction)
    return task


async def agent_tasks(session: AsyncSession, query: TaskQuery) -> tuple[KeysetPage[AgentTask], str, datetime | None]:
    """The page, its ETag and when the clock alone will change it."""
    rows, more, total = await query.page(session, *_TASK_COLUMNS)
    last = Cursor(at=rows[-1].published_at, id=rows[-1].id) if rows else None
    page = KeysetPage[AgentTask].after([task_for(row, query.caller) for row in rows], query.params, total, more, last)
    return page, query.etag(total, rows), _next_deadline(rows)


async def task_list(session: SessionSource, stamp: str | None, query: TaskQuery,
                    validator: str | None) -> tuple[bytes | None, str]:
    """The page's JSON and ETag; no JSON when the caller's ``If-None-Match`` (``validator``) names it. A page
    kept under the database's state (``stamp``) is answered without a session."""
    cached = _pages.get(query.key, stamp)
    if cached is None and validator:
        # The ETag from the columns the page is made of is enough to answer 304; kept for the next poll.
        rows, _, total = await query.page(session(), *_TASK_VERSION_COLUMNS)
        cached = None, query.etag(total, rows)
        _pages.put(query.key, stamp, cached, _next_deadline(rows))
    if cached is not None and still_fresh(validator, cached[1]):
        return None, cached[1]
    if cached is None or cached[0] is None:
        page, etag, until = await agent_tasks(session(), query)
        cached = page.model_dump_json().encode(), etag
        _pages.put(query.key, stamp, cached, until)
    return cached


async def list_agent_tasks(session: AsyncSession, module: Module | None, status: TaskStatus | None,
                           params: PageParams) -> KeysetPage[AgentTask]:
    """Tasks agents see: published ones by default; drafts never."""
    page, _, _ = await agent_tasks(session, TaskQuery.of(module, status, params, None))
    return page


async def list_holder_claims(session: AsyncSession, actor: Actor, status: ClaimStatus | None, params: PageParams,
                             after: str | None = None) -> KeysetPage[AgentClaimStatus]:
    """The caller's claims, newest first, by page or by cursor."""
    filters = [holder_filter(actor)]
    if status is not None:
        filters.append(Claim.status == status)
    query = select(Claim).where(*filters)
    if after:
        query = query.where(Cursor.decode(after, params).before(Claim.created_at, Claim.id))
    claims = list((await session.execute(
        query.order_by(*_CLAIM_ORDER).offset(params.offset).limit(params.pageSize + 1))).scalars())
    more, claims = len(claims) > params.pageSize, claims[: params.pageSize]
    total = int(await session.scalar(select(func.count(Claim.id)).where(*filters)) or 0)
    last = Cursor(at=claims[-1].created_at, id=claims[-1].id) if claims else None
    return KeysetPage[AgentClaimStatus].after(await claim_statuses(session, claims), params, total, more, last)
