"""Review deadlines without a server: the percentile rule of a publisher's decision times (hand-computed,
docs/lifecycle.md), where a claim's money is (payout.stage), and when review.due is emitted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bountyboard.config import Settings
from bountyboard.market import deadlines
from bountyboard.market.deadlines import payout_of, schedule_review
from bountyboard.market.decisions import nearest_rank, summarize
from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = 3600.0


@pytest.mark.parametrize(("hours", "median", "p90"), [
    ([], None, None),
    ([3], 3, 3),
    ([4, 1, 3, 2], 2, 4),  # n = 4: the 2nd and the ceil(3.6) = 4th in order
    (list(range(1, 11)), 5, 9),  # n = 10: the 5th and the 9th
    (list(range(1, 12)), 6, 10),  # n = 11: the ceil(5.5) = 6th and the ceil(9.9) = 10th
    ([0.5, 48, 48, 48, 72], 48, 72),
])
def test_median_and_90th_percentile_by_nearest_rank(hours: list[float], median: float | None,
                                                   p90: float | None) -> None:
    assert nearest_rank(hours, 0.5) == median and nearest_rank(hours, 0.9) == p90


def test_a_publishers_summary() -> None:
    # Decided after 1 h and 2 h by reviewers, and after 24 h twice by the deadline; one still pending.
    decisions = [(1 * HOUR, False), (24 * HOUR, True), (2 * HOUR, False), (24 * HOUR, True)]
    summary = summarize("usr_1", decisions, pending=1)
    assert summary.model_dump() == {"publisherId": "usr_1", "decided": 4, "pending": 1, "medianHours": 2.0,
                                    "p90Hours": 24.0, "decidedByDeadline": 2, "decidedByDeadlineShare": 0.5}
    empty = summarize("usr_2", [], pending=0)
    assert (empty.medianHours, empty.p90Hours, empty.decidedByDeadlineShare) == (None, None, None)


def _task(**fields: Any) -> Task:
    values: dict[str, Any] = {"module": "fun", "status": TaskStatus.IN_PROGRESS, "bounty_cents": 500,
                              "published_at": T0, "ended_at": None, "review_within_hours": None,
                              "on_review_timeout": "accept"}
    return Task(**(values | fields))


def _claim(**fields: Any) -> Claim:
    values: dict[str, Any] = {"status": ClaimStatus.ACTIVE, "review_state": ReviewState.NOT_SUBMITTED,
                              "holds_slot": True, "payout_cents": 0, "ended_at": None, "expires_at": None,
                              "appeal_deadline": None, "escalated_at": None, "review_due_at": None}
    return Claim(**(values | fields))


SUBMITTED = {"status": ClaimStatus.SUBMITTED, "review_state": ReviewState.PENDING, "review_due_at": T0 + timedelta(2)}
DONE = T0 + timedelta(hours=5)


@pytest.mark.parametrize(("claim", "task", "expected"), [
    (_claim(), _task(), ("escrowed", T0)),
    (_claim(**SUBMITTED), _task(), ("due", T0 + timedelta(2))),
    (_claim(**SUBMITTED), _task(on_review_timeout="escalate"), ("escrowed", T0)),
    (_claim(**SUBMITTED), _task(module="arena"), ("escrowed", T0)),  # arenas always escalate
    (_claim(**SUBMITTED, escalated_at=DONE), _task(), ("escrowed", T0)),
    (_claim(status=ClaimStatus.ACCEPTED, review_state=ReviewState.ACCEPTED, payout_cents=500),
     _task(status=TaskStatus.COMPLETED, ended_at=DONE), ("paid", DONE)),
    (_claim(status=ClaimStatus.EXPIRED, holds_slot=False, ended_at=DONE), _task(), ("forfeited", DONE)),
    (_claim(status=ClaimStatus.REJECTED, review_state=ReviewState.APPEAL_DENIED, holds_slot=False, ended_at=DONE),
     _task(status=TaskStatus.PUBLISHED), ("forfeited", DONE)),
    # Ended with the task (wound up by its cancellation): the bounty went back to the publisher.
    (_claim(status=ClaimStatus.EXPIRED, holds_slot=False, ended_at=DONE),
     _task(status=TaskStatus.CANCELLED, ended_at=DONE), ("refunded", DONE)),
    # Ended before the task did: forfeited then, whatever became of the bounty.
    (_claim(status=ClaimStatus.RELEASED, holds_slot=False, ended_at=T0 + timedelta(hours=1)),
     _task(status=TaskStatus.EXPIRED, ended_at=DONE), ("forfeited", T0 + timedelta(hours=1))),
])
def test_payout_stage(claim: Claim, task: Task, expected: tuple[str, datetime]) -> None:
    assert payout_of(claim, task) == expected


@pytest.mark.parametrize(("hours", "warn_before"), [(48, timedelta(hours=12)), (2, timedelta(hours=1))])
def test_review_due_is_told_at_most_half_the_window_before_the_deadline(
        hours: float, warn_before: timedelta, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadlines, "get_settings", lambda: Settings(review_due_warning_seconds=12 * 3600))
    claim = _claim()
    schedule_review(_task(review_within_hours=hours), claim, T0)
    assert claim.review_due_at == T0 + timedelta(hours=hours)
    assert claim.review_warn_at == claim.review_due_at - warn_before
