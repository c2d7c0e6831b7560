"""Track records as pure functions: the worked cases of docs/lifecycle.md ("Reputation"), written out
here rather than read from the code, and which claims count."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from bountyboard.market.models import ClaimStatus, ReviewState
from bountyboard.reputation.outcomes import ClaimFacts, outcome_of
from bountyboard.reputation.scoring import Outcome, jeffreys_interval, score, scores, weight

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
HALF_LIFE = 90.0


def _won(at: datetime = NOW, module: str = "fun") -> Outcome:
    return Outcome(module, True, at)


def _lost(at: datetime = NOW, module: str = "fun") -> Outcome:
    return Outcome(module, False, at)


def _beta_1_5_half_low() -> float:
    """The 2.5 % quantile of Beta(3/2, 1/2) by hand: with x = sin^2(phi) its CDF is
    (2/pi)(phi - sin(phi)cos(phi)); solved by bisection."""
    low, high = 0.0, math.pi / 2
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if (2 / math.pi) * (mid - math.sin(mid) * math.cos(mid)) < 0.025 else (low, mid)
    return math.sin(low) ** 2


def test_a_new_bot_has_no_rate_and_the_whole_interval() -> None:
    new = score([], NOW, HALF_LIFE)
    assert (new.successes, new.failures, new.effective_n, new.rate) == (0.0, 0.0, 0.0, None)
    assert (new.low, new.high, new.last_activity_at) == (0.0, 1.0, None)


def test_one_of_one_is_not_a_veteran() -> None:
    one = score([_won()], NOW, HALF_LIFE)
    assert (one.successes, one.failures, one.effective_n, one.rate) == (1.0, 0.0, 1.0, 1.0)
    assert one.low == pytest.approx(_beta_1_5_half_low(), abs=1e-12)
    assert one.low == pytest.approx(0.146746, abs=1e-6)
    assert one.high == 1.0  # no failure: the upper end is 1
    assert one.last_activity_at == NOW


def test_ninety_five_of_a_hundred() -> None:
    record = score([_won()] * 95 + [_lost()] * 5, NOW, HALF_LIFE)
    assert (record.successes, record.failures, record.rate) == (95.0, 5.0, 0.95)
    # Beta(95.5, 5.5) quantiles (an independent 30-digit bisection of the incomplete beta gives the same).
    assert record.low == pytest.approx(0.893900, abs=1e-6)
    assert record.high == pytest.approx(0.980668, abs=1e-6)
    # The veteran's lower bound is far above the newcomer's.
    assert record.low > score([_won()], NOW, HALF_LIFE).low + 0.7


def test_an_outcome_one_half_life_old_counts_half() -> None:
    old = NOW - timedelta(days=HALF_LIFE)
    assert weight(old, NOW, HALF_LIFE) == pytest.approx(0.5)
    assert weight(NOW - timedelta(days=2 * HALF_LIFE), NOW, HALF_LIFE) == pytest.approx(0.25)
    assert weight(NOW + timedelta(days=1), NOW, HALF_LIFE) == 1.0  # never more than a fresh outcome
    single = score([_won(old)], NOW, HALF_LIFE)
    assert (single.successes, single.effective_n, single.rate) == (pytest.approx(0.5), pytest.approx(0.5), 1.0)
    # Beta(1, 1/2): CDF 1 - (1 - x)^(1/2), so the 2.5 % quantile is 1 - 0.975^2.
    assert single.low == pytest.approx(1 - 0.975**2, abs=1e-12)
    assert single.high == 1.0
    # A success now and a failure one half-life ago: s = 1, f = 1/2, Beta(3/2, 1) with CDF x^(3/2).
    mixed = score([_won(), _lost(old)], NOW, HALF_LIFE)
    assert (mixed.successes, mixed.failures) == (1.0, pytest.approx(0.5))
    assert mixed.rate == pytest.approx(2 / 3)
    assert (mixed.low, mixed.high) == (pytest.approx(0.025 ** (2 / 3)), pytest.approx(0.975 ** (2 / 3)))
    assert mixed.last_activity_at == NOW


def test_no_success_puts_the_lower_end_at_zero() -> None:
    assert jeffreys_interval(0.0, 3.0)[0] == 0.0
    assert jeffreys_interval(0.0, 0.0) == (0.0, 1.0)


def test_scores_per_module() -> None:
    overall, per_module = scores([_won(module="fun"), _lost(module="translate"), _won(module="translate")],
                                 NOW, HALF_LIFE)
    assert overall.effective_n == 3 and overall.rate == pytest.approx(2 / 3)
    assert list(per_module) == ["fun", "translate"]
    assert (per_module["fun"].rate, per_module["translate"].rate) == (1.0, 0.5)


def _facts(status: ClaimStatus, state: ReviewState = ReviewState.NOT_SUBMITTED, *, holds_slot: bool = False,
           reviewed: datetime | None = None, window: datetime | None = None, expires: datetime | None = None,
           ended: datetime | None = None, resolved: datetime | None = None) -> ClaimFacts:
    return ClaimFacts("fun", status, state, holds_slot, reviewed, window, expires, ended, resolved)


HOUR = timedelta(hours=1)
CASES = [
    ("accepted", _facts(ClaimStatus.ACCEPTED, ReviewState.ACCEPTED, reviewed=NOW - HOUR), (True, NOW - HOUR)),
    ("appeal upheld", _facts(ClaimStatus.ACCEPTED, ReviewState.APPEAL_UPHELD, reviewed=NOW - 2 * HOUR,
                             resolved=NOW - HOUR), (True, NOW - HOUR)),
    ("appeal denied", _facts(ClaimStatus.REJECTED, ReviewState.APPEAL_DENIED, reviewed=NOW - 2 * HOUR,
                             resolved=NOW - HOUR), (False, NOW - HOUR)),
    ("rejected, window closed", _facts(ClaimStatus.REJECTED, ReviewState.REJECTED, holds_slot=True,
                                       reviewed=NOW - 2 * HOUR, window=NOW - HOUR), (False, NOW - 2 * HOUR)),
    ("rejected, slot freed", _facts(ClaimStatus.REJECTED, ReviewState.REJECTED, reviewed=NOW - 2 * HOUR,
                                    window=NOW + HOUR), (False, NOW - 2 * HOUR)),
    ("rejected, window open", _facts(ClaimStatus.REJECTED, ReviewState.REJECTED, holds_slot=True,
                                     reviewed=NOW - HOUR, window=NOW + HOUR), None),
    ("appealed", _facts(ClaimStatus.REJECTED, ReviewState.APPEALED, holds_slot=True, reviewed=NOW - HOUR), None),
    ("released", _facts(ClaimStatus.RELEASED, ended=NOW - HOUR), (False, NOW - HOUR)),
    ("TTL ran out", _facts(ClaimStatus.EXPIRED, expires=NOW - 2 * HOUR, ended=NOW - HOUR), (False, NOW - 2 * HOUR)),
    ("ended by the task", _facts(ClaimStatus.EXPIRED, expires=NOW + HOUR, ended=NOW - HOUR), None),
    ("TTL ran out, not swept", _facts(ClaimStatus.ACTIVE, holds_slot=True, expires=NOW - HOUR), (False, NOW - HOUR)),
    ("active", _facts(ClaimStatus.ACTIVE, holds_slot=True, expires=NOW + HOUR), None),
    ("submitted", _facts(ClaimStatus.SUBMITTED, ReviewState.PENDING, holds_slot=True, expires=NOW - HOUR), None),
]


@pytest.mark.parametrize(("facts", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_which_claims_count_and_when(facts: ClaimFacts, expected: tuple[bool, datetime] | None) -> None:
    outcome = outcome_of(facts, NOW)
    assert (None if outcome is None else (outcome.success, outcome.at)) == expected
