"""The hub counts trials as Harbor 0.25.0 does: checked against jobs Harbor itself wrote.

Each fixture under tests/fixtures/harbor/jobs is a job directory written by ``harbor run``; its
result.json carries Harbor's own ``stats.evals[*].metrics`` and ``pass_at_k``. The trials are read
from the per-trial result.json files and grouped by Harbor's eval key (agent, model, dataset).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from bountyboard.benchhub import stats

JOBS = Path(__file__).resolve().parents[1] / "fixtures" / "harbor" / "jobs"
JOB_DIRS = sorted(path for path in JOBS.iterdir() if (path / "result.json").is_file())


def eval_key(result: dict[str, Any]) -> str:
    """Harbor's ``JobStats.format_agent_evals_key``: ``agent__model__dataset`` or ``agent__dataset``."""
    agent = result["agent_info"]
    model = (agent.get("model_info") or {}).get("name")
    parts = [agent["name"], *([model] if model else []), result.get("source") or "adhoc"]
    return "__".join(parts)


def trials_by_eval(job: Path) -> dict[str, list[stats.TrialRow]]:
    groups: dict[str, list[stats.TrialRow]] = defaultdict(list)
    for trial_result in sorted(job.glob("*/result.json")):
        result = json.loads(trial_result.read_text())
        verifier = result.get("verifier_result")
        rewards = verifier.get("rewards") if verifier else None
        error = (result.get("exception_info") or {}).get("exception_type")
        groups[eval_key(result)].append((result["task_name"], rewards, error))
    return groups


def test_fixtures_cover_errors_and_several_keys() -> None:
    everything = [row for job in JOB_DIRS for rows in trials_by_eval(job).values() for row in rows]
    assert any(rewards is None and error for _, rewards, error in everything)
    assert any(rewards and len(rewards) > 1 for _, rewards, _ in everything)


@pytest.mark.parametrize("job", JOB_DIRS, ids=lambda path: path.name)
def test_every_harbor_job_gives_harbors_means_and_pass_at_k(job: Path) -> None:
    harbor_evals = json.loads((job / "result.json").read_text())["stats"]["evals"]
    ours = trials_by_eval(job)
    assert set(ours) == set(harbor_evals)
    for key, trials in ours.items():
        expected = harbor_evals[key]
        assert stats.as_harbor_metric(stats.harbor_metrics(trials)) == expected["metrics"][0], key
        assert stats.pass_at_k(trials) == {int(k): value for k, value in expected["pass_at_k"].items()}, key
        count = stats.count_run(trials, registry_key="accuracy")
        assert (count.n_rewarded, count.n_errors) == (expected["n_trials"], expected["n_errors"]), key


def test_an_errored_trial_counts_zero_for_every_key() -> None:
    # Harbor's example from issue 13: 4 scored trials, 2 errored ones: mean 3/6 = 0.5, not 3/4.
    trials: list[stats.TrialRow] = [
        ("a", {"reward": 1.0}, None), ("b", {"reward": 1.0}, None), ("c", {"reward": 1.0}, None),
        ("d", {"reward": 0.0}, None), ("e", None, "AgentTimeoutError"), ("f", None, "AgentTimeoutError"),
    ]
    assert stats.harbor_metrics(trials) == {"reward": 0.5}


def test_several_keys_each_get_a_mean_and_a_missing_key_counts_zero() -> None:
    trials: list[stats.TrialRow] = [
        ("a", {"accuracy": 1.0, "style": 0.5}, None), ("b", {"accuracy": 0.0}, None), ("c", None, "Crash"),
        ("d", {"accuracy": 1, "style": 1}, None),
    ]
    assert stats.harbor_metrics(trials) == {"accuracy": 0.5, "style": 0.375}
    assert stats.pass_at_k(trials) == {}  # several keys: Harbor reports none


def test_a_single_key_of_any_name_is_harbors_mean() -> None:
    trials: list[stats.TrialRow] = [("a", {"passed": 1}, None), ("b", {"passed": 0}, None), ("c", {}, None)]
    metrics = stats.harbor_metrics(trials)
    assert metrics == {"passed": pytest.approx(1 / 3)}
    assert stats.as_harbor_metric(metrics) == {"mean": pytest.approx(1 / 3)}
    assert stats.harbor_metrics([("a", None, "Crash")]) == {"reward": 0.0}
    assert stats.harbor_metrics([("a", None, "Crash")], empty_key="accuracy") == {"accuracy": 0.0}


def test_an_empty_reward_counts_zero_in_n_trials_and_leaves_no_pass_at_k() -> None:
    # A verifier that wrote {}: a trial with rewards (Harbor's n_trials), no error, 0 for every key,
    # and Harbor's pass@k is empty for the whole eval (not a single 0/1 key).
    trials: list[stats.TrialRow] = [("a", {}, None), ("a", {"reward": 1}, None), ("b", None, "Crash"),
                                     ("b", {"reward": 1}, None)]
    count = stats.count_run(trials)
    assert (count.n_trials, count.n_rewarded, count.n_errors) == (4, 3, 1)
    assert (count.metrics, count.score, count.pass_at_k) == ({"reward": 0.5}, 0.5, {})


def test_primary_key_order_override_reward_registry_only() -> None:
    keys = ["accuracy", "latency_ok", "reward"]
    assert stats.primary_key(keys) == "reward"
    # Harbor's uploader (_extract_primary_reward) takes `reward` first; the registry key comes next.
    assert stats.primary_key(keys, registry_key="accuracy") == "reward"
    assert stats.primary_key(["accuracy", "latency_ok"], registry_key="accuracy") == "accuracy"
    assert stats.primary_key(keys, registry_key="accuracy", override="latency_ok") == "latency_ok"
    assert stats.primary_key(["passed"], registry_key="accuracy") == "passed"
    assert stats.primary_key([], registry_key="accuracy") == "accuracy"
    with pytest.raises(stats.AmbiguousPrimaryKeyError, match="--metric"):
        stats.primary_key(["a", "b"], registry_key="accuracy")
    with pytest.raises(stats.AmbiguousPrimaryKeyError, match="no reward key 'speed'"):
        stats.primary_key(keys, override="speed")


def test_pass_at_k_by_hand() -> None:
    # Task A: 4 attempts, 1 success; task B: 5 attempts, 0 successes; an errored attempt counts 0.
    # Fewest attempts 4, so k in {2, 4}. A: pass@2 = 1 - C(3,2)/C(4,2) = 1/2, pass@4 = 1; B: 0.
    trials: list[stats.TrialRow] = [
        *[("A", {"reward": value}, None) for value in (1, 0, 0)], ("A", None, "Crash"),
        *[("B", {"reward": 0.0}, None) for _ in range(5)],
    ]
    assert stats.pass_at_k(trials) == {2: 0.25, 4: 0.5}
    assert stats.pass_at_k([("A", {"reward": 0.5}, None), ("A", {"reward": 1}, None)]) == {}
    assert stats.pass_at_k([("A", {"reward": 1}, None)]) == {}  # one attempt: no k >= 2
    ten = [("A", {"reward": float(i < 3)}, None) for i in range(10)]
    assert sorted(stats.pass_at_k(ten)) == [2, 4, 5, 8, 10]
