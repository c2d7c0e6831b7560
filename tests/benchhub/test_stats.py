"""The hub's statistics against hand-computed cases (pure functions: no server needed).

Counting (Harbor's means, pass@k) is in test_harbor_counting.py; the same four decision cases are
checked over HTTP in test_hub_http.py.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bountyboard.benchhub import decisions, stats
from bountyboard.benchhub.aliases import model_key

pytestmark = pytest.mark.in_process

GSM8K_TOLERANCE = 0.02  # the registry's tolerance.abs for gsm8k
CLAIM = 0.92


def binary_run(successes: int, tasks: int) -> stats.Estimate:
    trials: list[stats.TrialRow] = [(f"t{i}", {"reward": float(i < successes)}, None) for i in range(tasks)]
    return stats.count_run(trials).estimate


def test_clustered_variance_by_hand() -> None:
    # A: 1, 1, 0 (S=2, M=3); B: an errored trial (S=0, M=1); C: 1, 0 (S=1, M=2). Harbor's mean 3/6.
    # Residuals S - 0.5 M: 0.5, -0.5, 0 -> squares 0.5; variance = 3/2 * 0.5 / 6^2 = 1/48.
    trials: list[stats.TrialRow] = [
        ("A", {"reward": 1}, None), ("A", {"reward": 1}, None), ("A", {"reward": 0}, None),
        ("B", None, "AgentTimeoutError"), ("C", {"reward": 1}, None), ("C", {"reward": 0}, None),
    ]
    count = stats.count_run(trials)
    assert count.score == 0.5 and count.n_errors == 1 and count.n_trials == 6
    assert count.estimate.variance == pytest.approx(1 / 48)
    # p(1-p)/var = 0.25 * 48 = 12, capped at the 6 trials a pass/fail run has.
    assert count.estimate.effective_size() == pytest.approx(6)
    assert count.tally.as_json() == {"sums": {"A": 2.0, "B": 0.0, "C": 1.0}, "trials": {"A": 3, "B": 1, "C": 2}}


def test_one_task_has_a_score_but_no_spread() -> None:
    estimate = binary_run(1, 1)
    assert estimate.mean == 1.0 and estimate.stderr is None
    assert estimate.ci95 == (pytest.approx(0.146, abs=1e-3), 1.0)  # Jeffreys, one observation


@pytest.mark.parametrize(("successes", "tasks", "status"), [
    (3, 5, "inconclusive"), (5, 5, "inconclusive"), (280, 400, "discrepant"), (1207, 1319, "reproduced"),
])
def test_the_four_hand_computed_cases(successes: int, tasks: int, status: str) -> None:
    estimate = binary_run(successes, tasks)
    verdict = decisions.verdict(has_runs=True, measured=estimate, claim=CLAIM, tolerance=GSM8K_TOLERANCE,
                            reproducible=True)
    assert verdict.status == status
    assert verdict.band == (pytest.approx(0.90), pytest.approx(0.94))


def test_large_sample_intervals_agree_with_the_normal_approximation() -> None:
    # 1207/1319: p = 0.91509, se = sqrt(p (1 - p) / 1318) = 0.007678; 90%: p ± 1.645 se = [0.9025, 0.9277].
    estimate = binary_run(1207, 1319)
    p, se = 1207 / 1319, math.sqrt(1207 / 1319 * (112 / 1319) / 1318)
    assert estimate.stderr == pytest.approx(se)
    low, high = estimate.interval(0.90)  # type: ignore[misc]
    assert low == pytest.approx(p - 1.645 * se, abs=1e-3) and high == pytest.approx(p + 1.645 * se, abs=1e-3)
    assert low > 0.90  # inside the band [0.90, 0.94]: reproduced
    # 280/400: 95% interval 0.70 ± 1.96 * 0.0229 = [0.655, 0.745], far below 0.90: discrepant.
    low, high = binary_run(280, 400).ci95  # type: ignore[misc]
    assert low == pytest.approx(0.655, abs=2e-3) and high == pytest.approx(0.745, abs=2e-3)


def test_small_samples_are_not_decided_either_way() -> None:
    # 3/5: the exact one-sided p-value of 0.90 is P(X <= 3 | 5, 0.9) = 0.0815: not excluded at 5%.
    low, high = binary_run(3, 5).ci95  # type: ignore[misc]
    assert high > 0.90
    # 5/5 stays in [0, 1] (a Wald interval would be [1, 1]) and reaches below the band.
    low, high = binary_run(5, 5).ci95  # type: ignore[misc]
    assert high == 1.0 and low < 0.90


@pytest.mark.parametrize(("successes", "tasks", "extra"), [(3, 5, 2), (5, 5, 36)])
def test_extra_tasks_is_the_smallest_number_that_decides(successes: int, tasks: int, extra: int) -> None:
    estimate = binary_run(successes, tasks)
    assert decisions.extra_tasks_to_decide(estimate, CLAIM, GSM8K_TOLERANCE) == extra
    assert decisions.decide(estimate, CLAIM, GSM8K_TOLERANCE, (tasks + extra) / tasks) != "inconclusive"
    assert decisions.decide(estimate, CLAIM, GSM8K_TOLERANCE, (tasks + extra - 1) / tasks) == "inconclusive"


def test_decided_results_and_a_mean_on_the_band_edge_need_no_extra_tasks() -> None:
    assert decisions.extra_tasks_to_decide(binary_run(280, 400), CLAIM, GSM8K_TOLERANCE) is None
    # A mean exactly on the band's edge can never be shown inside or outside it.
    assert decisions.extra_tasks_to_decide(binary_run(9, 10), CLAIM, GSM8K_TOLERANCE) is None


@pytest.mark.parametrize(("kwargs", "status"), [
    ({"has_runs": False, "measured": None, "claim": None, "reproducible": True}, "gap"),
    ({"has_runs": False, "measured": None, "claim": 0.7, "reproducible": True}, "claim_only"),
    ({"has_runs": False, "measured": None, "claim": 0.7, "reproducible": False}, "not_reproducible"),
    ({"has_runs": True, "measured": binary_run(10, 20), "claim": None, "reproducible": True}, "runs_only"),
    ({"has_runs": True, "measured": binary_run(10, 20), "claim": 0.5, "reproducible": True}, "inconclusive"),
])
def test_verdict_statuses(kwargs: dict[str, object], status: str) -> None:
    assert decisions.verdict(tolerance=0.02, **kwargs).status == status  # type: ignore[arg-type]


def test_a_bounded_non_binary_metric_uses_its_range() -> None:
    # Scores in [0, 10]: tasks 6, 7, 8, 7 -> mean 7, tight spread; the interval stays in [0, 10].
    trials: list[stats.TrialRow] = [(f"t{i}", {"score": value}, None) for i, value in enumerate([6, 7, 8, 7])]
    count = stats.count_run(trials, metric=stats.MetricRange(0, 10))
    assert count.score == 7 and not count.estimate.binary
    low, high = count.estimate.ci95  # type: ignore[misc]
    assert 0 <= low < 7 < high <= 10


rewards = st.floats(min_value=0, max_value=1, allow_nan=False)
trial_lists = st.lists(st.tuples(st.integers(0, 6), st.one_of(st.none(), rewards, st.sampled_from([0.0, 1.0]))),
                       min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(trials=trial_lists, low=st.sampled_from([0.0, -1.0, 2.0]), width=st.sampled_from([1.0, 0.5, 100.0]),
       confidence=st.sampled_from([0.5, 0.9, 0.95, 0.999]))
def test_no_interval_leaves_the_metric_range(trials: list[tuple[int, float | None]], low: float, width: float,
                                             confidence: float) -> None:
    metric = stats.MetricRange(low, low + width)
    rows: list[stats.TrialRow] = [
        (f"t{task}", None if value is None else {"reward": low + value * width}, None if value is not None else "E")
        for task, value in trials
    ]
    estimate = stats.count_run(rows, metric=metric).estimate
    for scale in (1.0, 3.0):
        interval = estimate.interval(confidence, scale)
        assert interval is not None
        assert metric.low <= interval[0] <= interval[1] <= metric.high


@pytest.mark.parametrize(("name", "key"), [
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
    ("Anthropic/Claude Sonnet 4.5", "anthropic/claude-sonnet-4-5"),
    ("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
    ("claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
    ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
    ("evil/claude-sonnet-4-5-20250929", "evil/claude-sonnet-4-5-20250929"),
    ("openrouter/anthropic/claude-sonnet-4-5-20250929", "openrouter/anthropic/claude-sonnet-4-5-20250929"),
    ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/llama-3-1-8b-instruct"),
    ("acme/llama-3-8b", "acme/llama-3-8b"),
    ("calc-1", "calc-1"),
    ("gpt-4", "openai/gpt-4"),
])
def test_model_names_are_matched_through_the_alias_table(name: str, key: str) -> None:
    assert model_key(name) == key
