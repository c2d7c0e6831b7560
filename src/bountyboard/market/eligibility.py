"""Who may claim a task: its requirements on the claimant's track record, and probation (DESIGN.md section 14).

A task may ask for ``minReputation`` (on the lower end of the success rate's interval) and ``minCompleted``
(accepted claims). A claimant with fewer decided outcomes than ``probation_outcomes`` is on probation: it
holds at most ``probation_max_claims`` active claims and claims only bounties up to ``probation_max_bounty``.

The claimant's :class:`Standing` is read by the reputation package, which sits above the marketplace:
the app hands its reader to :func:`use_standing_reader` at start. A claim reads it under the claimant's
row lock; the task list reads it once per request (or from the cache while nothing changed) and
decides every listed task from it, in SQL for ``eligible=true`` and in Python for the flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import false, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.accounts.auth import Actor
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem
from bountyboard.ledger.money import format_money
from bountyboard.ledger.service import from_cents, to_cents
from bountyboard.market.models import Task, TaskStatus
from bountyboard.market.modules import Module, is_claimable
from bountyboard.market.service import holder_of
from bountyboard.statecache import StampedCache
from bountyboard.storage.session import SessionSource


@dataclass(frozen=True)
class Standing:
    """What eligibility reads of a claimant at one time."""

    low: float  # the lower end of the success rate's interval
    completed: int  # accepted claims (by review or upheld appeal), not weighted
    decided: int  # decided outcomes, not weighted
    active: int  # active claims now
    until: datetime | None = None  # when time alone changes this standing (a claim lapsing, a window closing)

    @property
    def on_probation(self) -> bool:
        return self.decided < get_settings().probation_outcomes


@dataclass(frozen=True)
class Caller:
    """The caller of the task list, for its per-task ``eligible``."""

    user_id: str
    standing: Standing

    @property
    def key(self) -> tuple[object, ...]:
        s = self.standing
        return self.user_id, s.low, s.completed, s.on_probation, s.on_probation and s.active >= _max_claims()


class StandingReader(Protocol):
    async def __call__(self, session: AsyncSession, column: InstrumentedAttribute[Any], holder: str,
                       current: datetime) -> Standing:
        """The standing of the claimant whose claims have ``holder`` in ``column`` (``service.holder_of``)."""
        ...


_readers: list[StandingReader] = []


def use_standing_reader(reader: StandingReader) -> None:
    """Set how standings are read (the app passes reputation's at start)."""
    _readers[:] = [reader]


async def standing_of(session: AsyncSession, actor: Actor, current: datetime) -> Standing:
    if not _readers:
        raise RuntimeError("no standing reader: bountyboard.app registers the reputation's at start")
    return await _readers[0](session, *holder_of(actor), current)  # the caller's claims


_standings: StampedCache[tuple[str, str], Standing] = StampedCache(1024)


async def caller_of(session: SessionSource, actor: Actor, stamp: str | None, current: datetime) -> Caller:
    """The list's caller, its standing kept while the database (``stamp``) and the clock have not changed it."""
    key = ("bot", actor.bot.id) if actor.bot is not None else ("user", actor.user_id)
    standing = _standings.get(key, stamp)
    if standing is None:
        standing = await standing_of(session(), actor, current)
        _standings.put(key, stamp, standing, standing.until)
    return Caller(actor.user_id, standing)


def _max_claims() -> int:
    return get_settings().probation_max_claims


def _max_bounty_cents() -> int:
    return to_cents(f"{get_settings().probation_max_bounty:.2f}", "probation_max_bounty")


def missing(task: Any, standing: Standing) -> list[dict[str, Any]]:
    """What the claimant lacks for ``task`` (a Task or a row with its columns): one entry per requirement."""
    found = []
    if task.min_reputation is not None and standing.low < task.min_reputation:
        found.append({"requirement": "minReputation", "required": task.min_reputation,
                      "actual": round(standing.low, 4),
                      "message": f"minReputation: the task asks for {task.min_reputation:g} on the lower end of the "
                                 f"success rate's interval; the claimant's is {standing.low:.4f}"})
    if task.min_completed is not None and standing.completed < task.min_completed:
        found.append({"requirement": "minCompleted", "required": task.min_completed, "actual": standing.completed,
                      "message": f"minCompleted: the task asks for {task.min_completed} completed claims; "
                                 f"the claimant has {standing.completed}"})
    if standing.on_probation:
        outcomes = get_settings().probation_outcomes
        if task.bounty_cents > _max_bounty_cents():
            found.append({"requirement": "probationMaxBounty", "required": from_cents(_max_bounty_cents()),
                          "actual": from_cents(task.bounty_cents),
                          "message": f"probation: with {standing.decided} of {outcomes} decided outcomes the "
                                     f"claimant takes bounties up to {format_money(from_cents(_max_bounty_cents()))}"})
        if standing.active >= _max_claims():
            found.append({"requirement": "probationMaxClaims", "required": _max_claims(), "actual": standing.active,
                          "message": f"probation: with {standing.decided} of {outcomes} decided outcomes the "
                                     f"claimant holds at most {_max_claims()} active claim(s); it holds "
                                     f"{standing.active}"})
    return found


async def require_eligible(session: AsyncSession, actor: Actor, task: Task, current: datetime) -> None:
    """Refuse the claim (403 ``not_eligible`` with ``reasons``) when the claimant lacks a requirement."""
    if task.min_reputation is None and task.min_completed is None and get_settings().probation_outcomes == 0:
        return  # nothing the claimant's record could lack: its record is not read under the task's lock
    reasons = missing(task, await standing_of(session, actor, current))
    if reasons:
        raise Problem(403, ErrorCode.NOT_ELIGIBLE,
                      f"Not eligible to claim task {task.id}: " + "; ".join(r["message"] for r in reasons) + ".",
                      reasons=reasons)


def eligibility(task: Any, caller: Caller, next_action: str) -> tuple[bool, str | None]:
    """Whether the caller may claim the listed task now, and if not why (``eligible``, ``ineligibleReason``)."""
    if next_action != "claim":
        return False, f"the task is not open for claims (nextAction: {next_action})"
    if task.publisher_id == caller.user_id:
        return False, "the caller published the task"
    reasons = missing(task, caller.standing)
    return (False, "; ".join(r["message"] for r in reasons)) if reasons else (True, None)


_CLAIMABLE = [module.value for module in Module if is_claimable(module)]


def eligible_filter(caller: Caller, current: datetime) -> list[ColumnElement[bool]]:
    """:func:`eligibility` as filters of the task list (``eligible=true``)."""
    standing = caller.standing
    filters = [Task.status == TaskStatus.PUBLISHED, Task.module.in_(_CLAIMABLE), Task.publisher_id != caller.user_id,
               or_(Task.deadline.is_(None), Task.deadline > current),
               or_(Task.min_reputation.is_(None), Task.min_reputation <= standing.low),
               or_(Task.min_completed.is_(None), Task.min_completed <= standing.completed)]
    if standing.on_probation:
        filters.append(Task.bounty_cents <= _max_bounty_cents())
        if standing.active >= _max_claims():
            filters.append(false())
    return filters
