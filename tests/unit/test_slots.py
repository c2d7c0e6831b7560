"""Slots: the last free slot fills a task, a freed slot reopens it, and only a held slot frees."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus
from bountyboard.market.slots import free_slot, overdue, overdue_holding, take_slot


def _task(max_claims: int, taken: int, status: TaskStatus) -> Task:
    return Task(id="task_1", status=status.value, max_claims=max_claims, slots_taken=taken)


def test_taking_the_last_slot_puts_the_task_in_progress() -> None:
    task = _task(2, 0, TaskStatus.PUBLISHED)
    take_slot(task)
    assert (task.slots_taken, task.status) == (1, "published")
    take_slot(task)
    assert (task.slots_taken, task.status) == (2, "in_progress")


def test_freeing_a_slot_of_a_full_task_reopens_it_once() -> None:
    task = _task(2, 2, TaskStatus.IN_PROGRESS)
    first, second = Claim(id="a", holds_slot=True), Claim(id="b", holds_slot=True)
    ended, later = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    free_slot(task, first, ended)
    assert (task.slots_taken, task.status, first.holds_slot, first.ended_at) == (1, "published", False, ended)
    free_slot(task, first, later)  # already freed: nothing changes
    assert (task.slots_taken, first.ended_at) == (1, ended)
    free_slot(task, second, later)
    assert (task.slots_taken, task.status) == (0, "published")


def test_freeing_a_slot_of_an_ended_task_keeps_its_status() -> None:
    task = _task(1, 1, TaskStatus.COMPLETED)
    free_slot(task, Claim(id="a", holds_slot=True), datetime(2026, 1, 1, tzinfo=UTC))
    assert (task.slots_taken, task.status) == (0, "completed")


def test_the_overdue_filter_picks_exactly_the_claims_overdue_names() -> None:
    """``overdue_holding`` (SQL, for a claim's check of a task's other holders) and ``overdue`` (Python) are
    one rule: over every combination of status, review state and times, they pick the same claims."""
    current = datetime(2026, 1, 1, tzinfo=UTC)
    times = [None, current - timedelta(seconds=1), current, current + timedelta(seconds=1)]
    claims = [
        Claim(id=f"clm_{number}", task_id="task_1", operator_id="usr_1", created_at=current, payout_cents=0,
              holds_slot=True, status=status, review_state=review_state, expires_at=expires_at,
              appeal_deadline=appeal_deadline)
        for number, (status, review_state, expires_at, appeal_deadline) in enumerate(
            itertools.product(ClaimStatus, ReviewState, times, times))
    ]
    engine = create_engine("sqlite://")
    Claim.__table__.create(engine)  # type: ignore[attr-defined]
    with Session(engine, expire_on_commit=False) as session:
        session.add_all(claims)
        session.commit()
        picked = set(session.scalars(select(Claim.id).where(overdue_holding(current))))
    assert picked == {claim.id for claim in claims if overdue(claim, current)}
    assert 0 < len(picked) < len(claims)
