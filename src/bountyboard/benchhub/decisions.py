"""The decisions of the benchmark hub on its estimates (:mod:`.stats`), as pure functions.

A claim is ``reproduced`` when a two one-sided test (TOST) at 5% puts the score within
``claim ± tolerance`` (the 90% interval lies inside that band), ``discrepant`` when the 95% interval
lies outside the band, ``inconclusive`` otherwise.

Two measurements are compared on their shared tasks (exact McNemar for single-attempt pass/fail,
paired t otherwise), and leaderboard ranks count only the entries surely better (LMArena's rule).

docs/benchhub.md has worked examples.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from scipy.special import bdtr, betaincinv, stdtr, stdtrit

from bountyboard.benchhub.stats import (
    DIFFERENCE_CONFIDENCE,
    EQUIVALENCE_CONFIDENCE,
    MAX_EXTRA_TASKS,
    MIN_TASKS_FOR_ERROR,
    Estimate,
    MetricRange,
    TaskTally,
    distribution_free_minimum,
)


class Status(StrEnum):
    REPRODUCED = "reproduced"
    DISCREPANT = "discrepant"
    INCONCLUSIVE = "inconclusive"
    RUNS_ONLY = "runs_only"
    CLAIM_ONLY = "claim_only"
    GAP = "gap"
    NOT_REPRODUCIBLE = "not_reproducible"
    SELF_REPORTED = "self_reported"


class Basis(StrEnum):
    """Whose runs a claim is judged on. Only ``independent`` runs (keyed submitters other than the
    claimant) can make a claim ``reproduced`` or ``discrepant``."""

    INDEPENDENT = "independent"
    CLAIMANT = "claimant"
    ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str = ""
    delta: float | None = None
    band: tuple[float, float] | None = None
    equivalence_interval: tuple[float, float] | None = None
    difference_interval: tuple[float, float] | None = None
    extra_tasks: int | None = None


def _band(claim: float, tolerance: float, metric: MetricRange) -> tuple[float, float]:
    return max(claim - tolerance, metric.low), min(claim + tolerance, metric.high)


def decide(estimate: Estimate, claim: float, tolerance: float, scale: float = 1.0) -> Status:
    """``reproduced``, ``discrepant`` or ``inconclusive``; ``scale`` imagines that many times the tasks."""
    band = _band(claim, tolerance, estimate.metric)
    equivalence = estimate.interval(EQUIVALENCE_CONFIDENCE, scale)
    difference = estimate.interval(DIFFERENCE_CONFIDENCE, scale)
    if equivalence is None or difference is None:
        return Status.INCONCLUSIVE
    if band[0] <= equivalence[0] and equivalence[1] <= band[1]:
        return Status.REPRODUCED
    if difference[1] < band[0] or difference[0] > band[1]:
        return Status.DISCREPANT
    return Status.INCONCLUSIVE


def extra_tasks_to_decide(estimate: Estimate, claim: float, tolerance: float) -> int | None:
    """How many more tasks, if they behaved like those measured, would make the decision.

    None when the result is decisive already, or when even ``MAX_EXTRA_TASKS`` more would not do
    (a mean on the edge of the band). The decision is monotone in the number of tasks, so the
    smallest number is found by doubling then bisecting.
    """
    n = estimate.n_tasks
    if n == 0 or decide(estimate, claim, tolerance) is not Status.INCONCLUSIVE:
        return None

    def decisive(extra: int) -> bool:
        return decide(estimate, claim, tolerance, (n + extra) / n) is not Status.INCONCLUSIVE

    high = 1
    while not decisive(high):
        if high >= MAX_EXTRA_TASKS:
            return None
        high *= 2
    low = high // 2  # not decisive (or 0, which is known not to be)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if decisive(middle) else (middle, high)
    return high


def verdict(*, has_runs: bool, measured: Estimate | None, claim: float | None, tolerance: float,
            reproducible: bool, basis: Basis = Basis.INDEPENDENT) -> Verdict:
    """Decide the status of one measurement against one claim (docs/benchhub.md, "Statistics" and
    "Independence"); ``basis`` says whose runs were measured."""
    if not has_runs:
        if not reproducible:
            return Verdict(Status.NOT_REPRODUCIBLE, "The benchmark cannot be run with the bench workflow.")
        if claim is not None:
            return Verdict(Status.CLAIM_ONLY, "A score is claimed but no run has been uploaded.")
        return Verdict(Status.GAP, "No claim and no run yet.")
    if claim is None:
        return Verdict(Status.RUNS_ONLY, "Runs exist but no score is claimed to compare with.")
    if measured is None or measured.mean is None:
        return Verdict(Status.INCONCLUSIVE, "No trial was measured.")
    band = _band(claim, tolerance, measured.metric)
    equivalence = measured.interval(EQUIVALENCE_CONFIDENCE)
    difference = measured.interval(DIFFERENCE_CONFIDENCE)
    if basis is not Basis.INDEPENDENT:
        whose = ("Only the claimant's own runs measured it" if basis is Basis.CLAIMANT
                 else "Only anonymous runs measured it")
        return Verdict(Status.SELF_REPORTED if basis is Basis.CLAIMANT else Status.INCONCLUSIVE,
                       f"{whose}: a run uploaded with a key by someone other than the claimant decides it.",
                       delta=measured.mean - claim, band=band, equivalence_interval=equivalence,
                       difference_interval=difference)
    status = decide(measured, claim, tolerance)
    shown = f"[{band[0]:.4g}, {band[1]:.4g}]"
    if status is Status.REPRODUCED:
        reason = f"The 90% interval lies inside claim ± tolerance {shown} (equivalence at 5%)."
    elif status is Status.DISCREPANT:
        reason = f"The 95% interval excludes claim ± tolerance {shown}."
    elif measured.variance_is_estimated and measured.n_tasks < distribution_free_minimum(DIFFERENCE_CONFIDENCE):
        reason = (f"Too few tasks to decide: {measured.n_tasks} tasks whose spread is estimated (rewards that are "
                  "not one pass/fail attempt per task) cannot show agreement or disagreement at 5%, whatever "
                  "their scores.")
    else:
        reason = (f"Too uncertain to decide: the 90% interval is not inside {shown} and the 95% interval "
                  "overlaps it.")
    return Verdict(status, reason, delta=measured.mean - claim, band=band, equivalence_interval=equivalence,
                   difference_interval=difference,
                   extra_tasks=extra_tasks_to_decide(measured, claim, tolerance)
                   if status is Status.INCONCLUSIVE else None)


# Comparisons of two measurements on their shared tasks, and ranks ------------------------------------


class PairedMethod(StrEnum):
    EXACT_MCNEMAR = "exact_mcnemar"
    PAIRED_T = "paired_t"


@dataclass(frozen=True)
class PairedComparison:
    """A - B on the tasks both measured, each task weighing once (the mean of its attempts)."""

    shared_tasks: int
    mean_a: float
    mean_b: float
    difference: float
    stderr: float
    interval: tuple[float, float]
    p_value: float
    method: PairedMethod


def _task_means(tally: TaskTally, tasks: Sequence[str]) -> list[float]:
    return [tally.sums[task] / tally.trials[task] for task in tasks]


def _single_pass_fail(tally: TaskTally, tasks: Sequence[str], metric: MetricRange) -> bool:
    return all(tally.trials[task] == 1 and tally.sums[task] in (metric.low, metric.high) for task in tasks)


def compare_paired(a: TaskTally, b: TaskTally, metric: MetricRange = MetricRange()) -> PairedComparison | None:
    """The paired difference of two measurements on the tasks both ran; None below two shared tasks.

    The standard error is the spread of the per-task differences (tasks are the independent units),
    ``sqrt(Σ(d - d̄)² / (n(n - 1)))``. Both single-attempt pass/fail: the exact McNemar test and the
    interval that inverts it (:func:`_mcnemar_interval`); otherwise the paired t test with ``n - 1``
    degrees of freedom (:func:`_paired_t`). docs/benchhub.md, "Paired comparison", has worked cases.
    """
    shared = sorted(a.trials.keys() & b.trials.keys())
    n = len(shared)
    if n < MIN_TASKS_FOR_ERROR:
        return None
    means_a, means_b = _task_means(a, shared), _task_means(b, shared)
    differences = [x - y for x, y in zip(means_a, means_b, strict=True)]
    mean_a, mean_b = math.fsum(means_a) / n, math.fsum(means_b) / n
    difference = math.fsum(differences) / n
    stderr = math.sqrt(math.fsum((d - difference) ** 2 for d in differences) / (n * (n - 1)))
    width = metric.high - metric.low
    if _single_pass_fail(a, shared, metric) and _single_pass_fail(b, shared, metric):
        passed_a = [value == metric.high for value in means_a]
        passed_b = [value == metric.high for value in means_b]
        only_a = sum(x and not y for x, y in zip(passed_a, passed_b, strict=True))
        only_b = sum(y and not x for x, y in zip(passed_a, passed_b, strict=True))
        low, high = _mcnemar_interval(only_a, only_b, n)
        return PairedComparison(n, mean_a, mean_b, difference, stderr, (low * width, high * width),
                                exact_mcnemar(only_a, only_b), PairedMethod.EXACT_MCNEMAR)
    interval, p_value = _paired_t(difference, stderr, n, width)
    return PairedComparison(n, mean_a, mean_b, difference, stderr, interval, p_value, PairedMethod.PAIRED_T)


def exact_mcnemar(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: twice the smaller tail of Binomial(discordant, ½), at most 1."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return min(1.0, 2 * float(bdtr(min(only_a, only_b), discordant, 0.5)))


def _clopper_pearson(successes: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion at the difference confidence."""
    tail = (1 - DIFFERENCE_CONFIDENCE) / 2
    low = 0.0 if successes == 0 else float(betaincinv(successes, n - successes + 1, tail))
    high = 1.0 if successes == n else float(betaincinv(successes + 1, n - successes, 1 - tail))
    return low, high


def _mcnemar_interval(only_a: int, only_b: int, n: int) -> tuple[float, float]:
    """The difference of paired pass rates is ``q (2π - 1)``: ``q`` the share of discordant tasks, ``π``
    the share of those A won. ``π``'s exact interval is the exact McNemar test inverted, so the interval
    excludes 0 exactly when that test's p is below 5%; ``q``'s exact interval sets the scale on the
    side that widens, so few discordant tasks (or none: no ``π`` at all) still leave an honest width."""
    discordant = only_a + only_b
    share_low, share_high = _clopper_pearson(discordant, n)
    won_low, won_high = _clopper_pearson(only_a, discordant) if discordant else (0.0, 1.0)
    low = (share_low if won_low > 0.5 else share_high) * (2 * won_low - 1)
    high = (share_high if won_high > 0.5 else share_low) * (2 * won_high - 1)
    return low, high


def _paired_t(difference: float, stderr: float, n: int, width: float) -> tuple[tuple[float, float], float]:
    """The paired t test's 95% interval and two-sided p-value, never stronger than a sign-flip test.

    With fewer tasks than :func:`distribution_free_minimum` the interval is the whole range of a
    difference; the p-value is at least ``2^(1-n)``, the smallest a sign-flip test of ``n`` tasks can
    give, so a normal approximation of the differences never decides what the tasks cannot. A spread
    of zero is a t of 0 (no difference: p = 1) or an unbounded one (p = that floor).
    """
    df = n - 1
    # A spread of zero: no difference at all, or one every task agrees on.
    no_spread = 1.0 if difference == 0 else 0.0
    t_p = 2 * float(stdtr(df, -abs(difference) / stderr)) if stderr > 0 else no_spread
    p_value = min(1.0, max(t_p, 2.0 ** (1 - n)))
    if n < distribution_free_minimum(DIFFERENCE_CONFIDENCE):
        return (-width, width), p_value
    half = float(stdtrit(df, 1 - (1 - DIFFERENCE_CONFIDENCE) / 2)) * stderr
    return (max(difference - half, -width), min(difference + half, width)), p_value


def significance_ranks(intervals: Sequence[tuple[float, float]], *, higher_is_better: bool) -> list[tuple[int, int]]:
    """Each entry's (rank, worst rank) among entries measured alike, from their 95% intervals.

    The rank is 1 + the number of entries surely better (LMArena's rule: their lower bound above this
    entry's upper bound, mirrored when lower is better), so entries the data cannot order share a
    rank; the worst rank is the count of entries less the number surely worse.
    """
    def better(one: tuple[float, float], other: tuple[float, float]) -> bool:
        return one[0] > other[1] if higher_is_better else one[1] < other[0]

    return [(1 + sum(better(other, mine) for other in intervals),
             len(intervals) - sum(better(mine, other) for other in intervals))
            for mine in intervals]


def task_set_id(dataset_revision: str, task_ids: Iterable[str]) -> str:
    """Names the tasks a measurement ran (its dataset revision and task ids), whatever their order."""
    text = json.dumps([dataset_revision, sorted(task_ids)], separators=(",", ":"))
    return "ts_" + hashlib.sha256(text.encode()).hexdigest()[:16]
