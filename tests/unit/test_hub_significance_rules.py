"""The hub's small-sample rule, ranks and paired comparison as pure functions, against figures worked by
hand (docs/benchhub.md) or by scipy's own tests, never by the functions under test."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from bountyboard.benchhub import decisions, stats


def tally(rewards: list[float], first_task: int = 0) -> stats.TaskTally:
    return stats.task_tally([(f"t{first_task + i}", {"reward": value}, None) for i, value in enumerate(rewards)],
                            "reward")


def estimate(rewards: list[float]) -> stats.Estimate:
    return stats.count_run([(f"t{i}", {"reward": value}, None) for i, value in enumerate(rewards)]).estimate


def status(rewards: list[float], claim: float, tolerance: float) -> str:
    return decisions.verdict(has_runs=True, measured=estimate(rewards), claim=claim, tolerance=tolerance,
                         reproducible=True).status


# The small-sample rule --------------------------------------------------------------------------------


def test_the_distribution_free_minimum_is_five_tasks_at_90_and_six_at_95() -> None:
    # A sign-flip test of n tasks reaches at best 2^-n on one side: 2^-4 = 0.0625 > 0.05 >= 2^-5 = 0.031;
    # 2^-5 = 0.031 > 0.025 >= 2^-6 = 0.0156.
    assert stats.distribution_free_minimum(0.90) == 5
    assert stats.distribution_free_minimum(0.95) == 6


@pytest.mark.parametrize(("rewards", "claim"), [([0.25, 0.7, 1.0, 0.5], 0.95), ([0.64, 0.76, 0.70, 0.70], 0.70)])
def test_four_varying_tasks_decide_nothing(rewards: list[float], claim: float) -> None:
    assert status(rewards, claim, 0.05) == "inconclusive"
    assert estimate(rewards).ci95 == (0.0, 1.0)


def test_the_t_widening_turns_a_normal_reproduced_into_inconclusive() -> None:
    # Six tasks .60 .80 .66 .74 .70 .70: mean .70, squared deviations .01 .01 .0016 .0016 0 0 -> 0.0232,
    # variance of the mean 0.0232 / 5 / 6 = 0.00077333, se = 0.027809; TOST against [0.65, 0.75]:
    # t = 0.05 / 0.027809 = 1.798 on 5 degrees of freedom, p = 0.066 (a normal z would give 0.036).
    rewards = [0.60, 0.80, 0.66, 0.74, 0.70, 0.70]
    result = estimate(rewards)
    assert result.variance == pytest.approx(0.0232 / 30)
    assert scipy_stats.t.sf(0.05 / math.sqrt(0.0232 / 30), 5) == pytest.approx(0.066, abs=1e-3)
    # n* = 0.21 / 0.00077333 = 271.55; at 90% times (1.6449 / 2.0150)^2 = 0.66631 -> 180.94.
    assert result.effective_size() == pytest.approx(0.21 / (0.0232 / 30))
    size = 271.55 * (1.644854 / 2.015048) ** 2
    assert size == pytest.approx(180.94, abs=0.01)
    low, high = result.interval(0.90)  # type: ignore[misc]
    assert low == pytest.approx(scipy_stats.beta.ppf(0.05, 0.7 * size + 0.5, 0.3 * size + 0.5), abs=1e-4)
    assert high == pytest.approx(scipy_stats.beta.ppf(0.95, 0.7 * size + 0.5, 0.3 * size + 0.5), abs=1e-4)
    # ... which is near the t interval 0.70 -+ 2.015 * 0.0278 = [0.644, 0.756] (Jeffreys: 0.642), not inside the band.
    assert low == pytest.approx(0.70 - 2.015 * 0.027809, abs=3e-3) and low < 0.65  # the Beta leans a little
    assert status(rewards, 0.70, 0.05) == "inconclusive"
    # Doubling the tasks (12, same spread) decides: se 0.0184, t = 2.72 on 11 degrees of freedom, p = 0.010.
    assert status(rewards * 2, 0.70, 0.05) == "reproduced"


@pytest.mark.parametrize(("successes", "tasks", "expected"), [
    (3, 5, "inconclusive"), (5, 5, "inconclusive"), (280, 400, "discrepant"), (1207, 1319, "reproduced"),
])
def test_single_attempt_pass_fail_keeps_its_binomial_interval(successes: int, tasks: int, expected: str) -> None:
    rewards = [float(i < successes) for i in range(tasks)]
    result = estimate(rewards)
    assert not result.variance_is_estimated
    # Jeffreys on n* = n - 1 observations, no widening: 3/5 -> Beta(2.9, 2.1) at 97.5% = 0.923 (the table).
    if (successes, tasks) == (3, 5):
        assert result.ci95[1] == pytest.approx(scipy_stats.beta.ppf(0.975, 2.9, 2.1), abs=1e-9)  # type: ignore[index]
    assert status(rewards, 0.92, 0.02) == expected


def test_several_attempts_of_pass_fail_count_as_an_estimated_spread() -> None:
    trials: list[stats.TrialRow] = [(f"t{task}", {"reward": float((task + attempt) % 3 == 0)}, None)
                                    for task in range(4) for attempt in range(3)]
    result = stats.count_run(trials).estimate
    assert result.binary and result.variance_is_estimated
    assert result.ci95 == (0.0, 1.0)  # 4 tasks, whatever the 12 trials


# Ranks ------------------------------------------------------------------------------------------------


def test_ranks_count_only_the_entries_surely_better() -> None:
    intervals = [(0.5, 0.8), (0.5, 0.8), (0.1, 0.3), (0.25, 0.6)]
    # The first two lie entirely above (0.1, 0.3), which the fourth overlaps: ranks 1, 1, 3, 1; the worst
    # place is 4 less the entries surely worse (the first two are surely better than the third only).
    assert decisions.significance_ranks(intervals, higher_is_better=True) == [(1, 3), (1, 3), (3, 4), (1, 4)]
    # Lower is better: (0.1, 0.3) is surely better than the first two, which can place 2nd to 4th.
    assert decisions.significance_ranks(intervals, higher_is_better=False) == [(2, 4), (2, 4), (1, 2), (1, 4)]


def test_twelve_overlapping_intervals_all_rank_first() -> None:
    assert decisions.significance_ranks([(0.1 + i / 100, 0.6 + i / 100) for i in range(12)],
                                    higher_is_better=True) == [(1, 12)] * 12


def test_task_sets_name_the_revision_and_the_tasks_not_their_order() -> None:
    assert decisions.task_set_id("main", ["b", "a"]) == decisions.task_set_id("main", ["a", "b"])
    assert decisions.task_set_id("main", ["a"]) != decisions.task_set_id("v2", ["a"])
    assert decisions.task_set_id("main", ["a"]) != decisions.task_set_id("main", ["a", "b"])


# The paired comparison --------------------------------------------------------------------------------


def test_exact_mcnemar_by_hand() -> None:
    assert decisions.exact_mcnemar(1, 0) == 1.0  # 2 * 1/2, capped
    assert decisions.exact_mcnemar(0, 0) == 1.0
    assert decisions.exact_mcnemar(8, 0) == pytest.approx(2 / 256)
    assert decisions.exact_mcnemar(6, 4) == pytest.approx(2 * (1 + 10 + 45 + 120 + 210) / 1024)
    assert decisions.exact_mcnemar(2, 9) == pytest.approx(scipy_stats.binomtest(2, 11, 0.5).pvalue)


def test_three_of_five_against_two_of_five() -> None:
    result = decisions.compare_paired(tally([1, 1, 1, 0, 0]), tally([1, 1, 0, 0, 0]))
    assert result is not None and result.method == "exact_mcnemar"
    assert (result.shared_tasks, result.p_value) == (5, 1.0)
    assert result.stderr == pytest.approx(0.2)
    # 1 discordant task of 5, won by A. Share discordant q: exact 95% upper bound Beta(2, 4)'s 97.5% point
    # (0.71642); share won by A: 1 of 1, exact interval [0.025, 1]. Neither excludes 1/2, so the wide side of q
    # scales both ends: [0.71642 * (2 * 0.025 - 1), 0.71642 * 1].
    q_high = scipy_stats.beta.ppf(0.975, 2, 4)
    assert q_high == pytest.approx(0.71642, abs=1e-5)
    assert result.interval == (pytest.approx(q_high * -0.95), pytest.approx(q_high))


def test_the_mcnemar_interval_excludes_zero_exactly_when_the_test_rejects() -> None:
    # 9/10 against 1/10 (A's nine include B's one): 8 discordant, all A's: p = 2 / 2^8. Won: [0.025^(1/8), 1] =
    # [0.63058, 1] (above 1/2, so q's low end scales the low end); q = 8/10: [Beta(8, 3) 2.5%, Beta(9, 2) 97.5%].
    result = decisions.compare_paired(tally([1] * 9 + [0]), tally([1] + [0] * 9))
    assert result is not None and result.p_value == pytest.approx(2 / 256)
    won_low = 0.025 ** (1 / 8)
    assert result.interval == (pytest.approx(scipy_stats.beta.ppf(0.025, 8, 3) * (2 * won_low - 1)),
                               pytest.approx(scipy_stats.beta.ppf(0.975, 9, 2)))
    assert result.interval[0] > 0
    # 9/10 against 5/10 nested: 4 discordant, all A's: p = 2 / 2^4 = 0.125 and the interval holds 0.
    wider = decisions.compare_paired(tally([1] * 9 + [0]), tally([1] * 5 + [0] * 5))
    assert wider is not None and wider.p_value == pytest.approx(0.125) and wider.interval[0] < 0 < wider.interval[1]


def test_identical_pass_fail_results_have_a_width_and_p_one() -> None:
    # 5/10 each, the same tasks: nothing discordant, p = 1; q's exact upper bound for 0 of 10 is
    # 1 - 0.025^(1/10) = 0.30850, and with no discordant task the share A wins is anything in [0, 1].
    result = decisions.compare_paired(tally([1] * 5 + [0] * 5), tally([1] * 5 + [0] * 5))
    assert result is not None and result.p_value == 1.0 and result.difference == 0
    assert result.interval == (pytest.approx(-0.30850, abs=1e-5), pytest.approx(0.30850, abs=1e-5))


def test_a_continuous_pair_is_the_paired_t_test() -> None:
    a = [0.90, 0.80, 0.70, 0.60, 0.95, 0.85, 0.75, 0.65]
    b = [0.85, 0.85, 0.60, 0.65, 0.80, 0.90, 0.70, 0.60]
    result = decisions.compare_paired(tally(a), tally(b))
    assert result is not None and result.method == "paired_t"
    reference = scipy_stats.ttest_rel(a, b)
    interval = reference.confidence_interval(0.95)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert result.interval == (pytest.approx(interval.low), pytest.approx(interval.high))
    assert result.difference == pytest.approx(0.03125) and result.stderr == pytest.approx(0.026621, abs=1e-6)


def test_few_shared_tasks_are_never_stronger_than_a_sign_flip_test() -> None:
    # Four tasks, every one 0.1 better: t is unbounded, but a sign-flip test of 4 tasks gives 2 / 16 at best.
    result = decisions.compare_paired(tally([0.5, 0.6, 0.7, 0.8]), tally([0.4, 0.5, 0.6, 0.7]))
    assert result is not None and result.p_value == pytest.approx(0.125)
    assert result.interval == (-1.0, 1.0)  # 4 < 6 tasks: no 95% statement
    # Two tasks with a real spread: the t test's own p-value when it is larger than the floor.
    two = decisions.compare_paired(tally([0.9, 0.2]), tally([0.1, 0.3]))
    assert two is not None
    assert two.p_value == pytest.approx(max(scipy_stats.ttest_rel([0.9, 0.2], [0.1, 0.3]).pvalue, 0.5))


def test_only_shared_tasks_count_and_fewer_than_two_compare_nothing() -> None:
    assert decisions.compare_paired(tally([1, 0]), tally([1, 0], first_task=1)) is None  # t1 only
    result = decisions.compare_paired(tally([1, 0, 1]), tally([0, 1, 1, 1, 1]))
    assert result is not None and result.shared_tasks == 3


def test_several_attempts_compare_task_means() -> None:
    # Task means a: 2/3, 0, 1/2; b: 1, 0, 0 -> differences -1/3, 0, 1/2.
    a = stats.task_tally([("x", {"reward": 1}, None), ("x", {"reward": 1}, None), ("x", {"reward": 0}, None),
                          ("y", {"reward": 0}, None), ("z", {"reward": 1}, None), ("z", {"reward": 0}, None)],
                         "reward")
    b = stats.task_tally([("x", {"reward": 1}, None), ("y", {"reward": 0}, None), ("z", {"reward": 0}, None)],
                         "reward")
    result = decisions.compare_paired(a, b)
    assert result is not None and result.method == "paired_t"
    assert result.difference == pytest.approx((-1 / 3 + 0 + 1 / 2) / 3)
    assert result.p_value == pytest.approx(max(scipy_stats.ttest_rel([2 / 3, 0, 1 / 2], [1, 0, 0]).pvalue, 0.25))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0])),
                          st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0]))), min_size=2, max_size=30))
def test_a_paired_interval_never_leaves_the_range_and_agrees_with_its_p_value(pairs: list[tuple[float, float]]) -> None:
    result = decisions.compare_paired(tally([x for x, _ in pairs]), tally([y for _, y in pairs]))
    assert result is not None
    assert -1.0 <= result.interval[0] <= result.interval[1] <= 1.0 and 0 <= result.p_value <= 1
    if result.p_value < 0.049:
        assert result.interval[0] > 0 or result.interval[1] < 0
    if result.p_value > 0.051:
        assert result.interval[0] <= 0 <= result.interval[1]
