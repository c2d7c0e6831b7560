"""The arithmetic of a track record, as pure functions of outcomes and a time (no I/O).

An outcome counts with the weight ``0.5 ** (age / half-life)``: one decided a half-life ago counts half.
The weighted successes ``s`` and failures ``f`` give the rate ``s / (s + f)`` and its Jeffreys
interval: the 2.5 % and 97.5 % quantiles of Beta(s + 1/2, f + 1/2), with the usual boundary rule
(Brown, Cai and DasGupta 2001): the lower end is 0 when there is no success, the upper end 1 when
there is no failure. With nothing decided the interval is [0, 1] and there is no rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from scipy.special import betaincinv

CONFIDENCE = 0.95
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Outcome:
    """One decided claim: its module, whether it counts for (True) or against the claimant, and when."""

    module: str
    success: bool
    at: datetime


@dataclass(frozen=True)
class Score:
    successes: float
    failures: float
    rate: float | None
    low: float
    high: float
    last_activity_at: datetime | None

    @property
    def effective_n(self) -> float:
        return self.successes + self.failures


def weight(at: datetime, current: datetime, half_life_days: float) -> float:
    """How much an outcome decided at ``at`` counts at ``current`` (1 now, 1/2 one half-life ago; never
    more than 1, should a time lie ahead of ``current``)."""
    age_days = max((current - at).total_seconds(), 0.0) / SECONDS_PER_DAY
    return float(0.5 ** (age_days / half_life_days))


def jeffreys_interval(successes: float, failures: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The equal-tailed Jeffreys interval of a success rate from (possibly fractional) counts."""
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if successes <= 0 else float(betaincinv(successes + 0.5, failures + 0.5, tail))
    high = 1.0 if failures <= 0 else float(betaincinv(successes + 0.5, failures + 0.5, 1.0 - tail))
    return low, high


def score(outcomes: Iterable[Outcome], current: datetime, half_life_days: float) -> Score:
    """The track record of these outcomes at ``current``."""
    successes = failures = 0.0
    last: datetime | None = None
    for outcome in outcomes:
        counted = weight(outcome.at, current, half_life_days)
        if outcome.success:
            successes += counted
        else:
            failures += counted
        last = outcome.at if last is None or outcome.at > last else last
    total = successes + failures
    low, high = jeffreys_interval(successes, failures)
    return Score(successes=successes, failures=failures, rate=successes / total if total > 0 else None,
                 low=low, high=high, last_activity_at=last)


def scores(outcomes: Iterable[Outcome], current: datetime, half_life_days: float) -> tuple[Score, dict[str, Score]]:
    """The overall track record and one per module (modules in name order)."""
    every = list(outcomes)
    modules = sorted({outcome.module for outcome in every})
    return score(every, current, half_life_days), {
        module: score((o for o in every if o.module == module), current, half_life_days) for module in modules}
