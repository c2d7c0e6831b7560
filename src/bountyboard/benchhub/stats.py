"""The statistics of the benchmark hub, as pure functions (no database, no HTTP).

Counting follows Harbor 0.25.0 (``harbor.metrics.mean.Mean`` over every trial of an eval and
``harbor.utils.pass_at_k``) so that a score here equals the ``stats.evals[*].metrics`` Harbor writes:

* every trial counts once; a trial without rewards (errored before the verifier wrote any) counts 0
  for every key, and a trial lacking one key counts 0 for that key;
* with several reward keys each key gets its own mean; with one key Harbor names the mean ``mean``
  (:func:`as_harbor_metric` converts), here it keeps its reward key;
* ``pass@k`` only for single-key binary rewards, k in {2, 4, 8, ...} and {5, 10, 15, ...} up to the
  fewest attempts of any task, averaged over tasks with the unbiased estimator.

docs/benchhub.md has worked examples.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

# Harbor's result.json may carry integer rewards; both count as numbers.
Rewards = Mapping[str, float]
# One trial as the CLI and the service see it: (task id, verifier rewards or None, error or None).
TrialRow = tuple[str, Rewards | None, str | None]
DEFAULT_PRIMARY_KEY = "reward"
HARBOR_SINGLE_METRIC_NAME = "mean"


class AmbiguousPrimaryKeyError(ValueError):
    """Several reward keys and none of them is the primary one."""


def reward_keys(rewards: Iterable[Rewards | None]) -> list[str]:
    """Every reward key any trial carries, sorted (Harbor's order)."""
    return sorted({key for reward in rewards if reward for key in reward})


def harbor_metrics(trials: Sequence[TrialRow], *, empty_key: str = DEFAULT_PRIMARY_KEY) -> dict[str, float]:
    """``{key: mean over all trials}``, as Harbor's ``Mean`` metric computes it.

    With one key the trials' values are averaged whatever the key is called (Harbor reads the only
    value of each dict); with none (every trial errored) the mean is 0 under ``empty_key``.
    """
    if not trials:
        return {}
    keys = reward_keys(rewards for _, rewards, _ in trials)
    if len(keys) <= 1:
        values = [next(iter(rewards.values()), 0.0) if rewards else 0.0 for _, rewards, _ in trials]
        return {keys[0] if keys else empty_key: math.fsum(values) / len(values)}
    return {
        key: math.fsum((rewards or {}).get(key, 0.0) for _, rewards, _ in trials) / len(trials)
        for key in keys
    }


def as_harbor_metric(metrics: Mapping[str, float]) -> dict[str, float]:
    """The shape Harbor writes in ``stats.evals[*].metrics[0]``: a single key is named ``mean``."""
    if len(metrics) == 1:
        return {HARBOR_SINGLE_METRIC_NAME: next(iter(metrics.values()))}
    return dict(metrics)


def primary_key(keys: Sequence[str], *, registry_key: str | None = None, override: str | None = None) -> str:
    """The key ``score`` is the mean of.

    An explicit override wins (``bench push --metric``, ``primaryMetric`` in an upload) and must be
    one of ``keys`` when the trials carry any; then the registry metric's key when the trials carry
    it, else ``reward``, else the only key. No key at all (every trial errored): the override, the
    registry key or ``reward``, whose mean is 0.
    """
    if override is not None:
        if keys and override not in keys:
            raise AmbiguousPrimaryKeyError(f"the trials carry no reward key {override!r} (keys: {', '.join(keys)})")
        return override
    if not keys:
        return registry_key or DEFAULT_PRIMARY_KEY
    for candidate in (registry_key, DEFAULT_PRIMARY_KEY):
        if candidate is not None and candidate in keys:
            return candidate
    if len(keys) == 1:
        return keys[0]
    raise AmbiguousPrimaryKeyError(
        f"the trials carry several reward keys ({', '.join(keys)}) and none is `{DEFAULT_PRIMARY_KEY}`"
        f"{f' or {registry_key!r}' if registry_key else ''}: name the primary one (bench push --metric KEY)"
    )


def pass_at_k(trials: Sequence[TrialRow]) -> dict[int, float]:
    """Harbor's ``pass@k``: empty unless every rewarded trial has one key valued 0 or 1."""
    successes: dict[str, list[int]] = defaultdict(list)
    for task_id, rewards, _ in trials:
        if rewards is None:
            successes[task_id].append(0)
            continue
        if len(rewards) != 1:
            return {}
        value = next(iter(rewards.values()))
        if value not in (0, 1):
            return {}
        successes[task_id].append(int(value))
    if not successes:
        return {}
    fewest = min(len(attempts) for attempts in successes.values())
    return {
        k: math.fsum(_task_pass_at_k(len(attempts), sum(attempts), k) for attempts in successes.values())
        / len(successes)
        for k in _eligible_k(fewest)
    }


def _eligible_k(most: int) -> list[int]:
    """Powers of two from 2 and multiples of 5, up to ``most``."""
    powers = {2**exponent for exponent in range(1, most.bit_length()) if 2**exponent <= most}
    fives = set(range(5, most + 1, 5))
    return sorted(powers | fives)


def _task_pass_at_k(n: int, correct: int, k: int) -> float:
    """``1 - C(n - c, k) / C(n, k)``, the unbiased estimator of Chen et al. (2021), as a product of
    ratios (Harbor's form, so the floats agree)."""
    if n - correct < k:
        return 1.0
    return 1.0 - math.prod((n - correct - i) / (n - i) for i in range(k))


Z95 = 1.96
# Fewer scored tasks than this and the spread between tasks cannot be estimated.
MIN_TASKS_FOR_ERROR = 2


def primary_reward(rewards: Mapping[str, float]) -> float | None:
    """The reward a score is made of: ``reward`` when present, else the only key, else none."""
    if "reward" in rewards:
        return rewards["reward"]
    if len(rewards) == 1:
        return next(iter(rewards.values()))
    return None


@dataclass
class Tally:
    """Per task: the sum and number of scored attempts, plus how many trials there were at all."""

    tasks: dict[str, list[float]] = field(default_factory=dict)
    n_trials: int = 0
    n_errors: int = 0

    def add(self, task_id: str, rewards: Mapping[str, float], error: str | None) -> None:
        self.n_trials += 1
        if error:
            self.n_errors += 1
        cell = self.tasks.setdefault(task_id, [0.0, 0])
        value = primary_reward(rewards)
        if value is not None:
            cell[0] += value
            cell[1] += 1

    def merge(self, tasks: Mapping[str, list[float]], n_trials: int, n_errors: int) -> None:
        """Pool another run's tally in (same task ids are the same cluster)."""
        self.n_trials += n_trials
        self.n_errors += n_errors
        for task_id, (total, count) in tasks.items():
            cell = self.tasks.setdefault(task_id, [0.0, 0])
            cell[0] += total
            cell[1] += count

    @property
    def task_means(self) -> list[float]:
        return [total / count for total, count in self.tasks.values() if count]


@dataclass(frozen=True)
class Estimate:
    mean: float | None
    stderr: float | None
    n_tasks: int
    n_scored_tasks: int
    n_trials: int
    n_errors: int

    @property
    def ci95(self) -> tuple[float, float] | None:
        return ci95(self.mean, self.stderr)


def ci95(mean: float | None, stderr: float | None) -> tuple[float, float] | None:
    """The 95% interval ``mean ± 1.96 se``, when both are known."""
    if mean is None or stderr is None:
        return None
    return mean - Z95 * stderr, mean + Z95 * stderr


def clustered_mean(task_means: list[float]) -> tuple[float | None, float | None]:
    """Mean of the task means and its task-clustered standard error."""
    n = len(task_means)
    if n == 0:
        return None, None
    mean = math.fsum(task_means) / n
    if n < MIN_TASKS_FOR_ERROR:
        return mean, None
    variance = math.fsum((value - mean) ** 2 for value in task_means) / (n - 1)
    return mean, math.sqrt(variance / n)


def estimate(tally: Tally) -> Estimate:
    means = tally.task_means
    mean, stderr = clustered_mean(means)
    return Estimate(mean=mean, stderr=stderr, n_tasks=len(tally.tasks), n_scored_tasks=len(means),
                    n_trials=tally.n_trials, n_errors=tally.n_errors)


def estimate_trials(trials: Iterable[tuple[str, Mapping[str, float], str | None]]) -> tuple[Estimate, Tally]:
    """Score one run from its ``(taskId, rewards, error)`` trials."""
    tally = Tally()
    for task_id, rewards, error in trials:
        tally.add(task_id, rewards, error)
    return estimate(tally), tally


class Status(StrEnum):
    REPRODUCED = "reproduced"
    DISCREPANT = "discrepant"
    INCONCLUSIVE = "inconclusive"
    RUNS_ONLY = "runs_only"
    CLAIM_ONLY = "claim_only"
    GAP = "gap"
    NOT_REPRODUCIBLE = "not_reproducible"


@dataclass(frozen=True)
class Verdict:
    status: Status
    delta: float | None = None
    combined_stderr: float | None = None
    threshold: float | None = None
    reason: str = ""


def verdict(
    *, has_runs: bool, measured: Estimate | None, claim: float | None, claim_stderr: float | None,
    tolerance_abs: float, reproducible: bool,
) -> Verdict:
    """Decide the status of one (model, benchmark) pair.

    With runs and a claim: ``reproduced`` when ``|measured - claim| <= max(tolerance.abs, 1.96 *
    combined standard error)``, ``discrepant`` otherwise, ``inconclusive`` when the runs cannot
    support a comparison (no scored trial, or fewer than two scored tasks). The combined standard
    error is ``sqrt(se_measured^2 + se_claim^2)`` (a claim without a published error adds 0).
    """
    if not has_runs:
        if not reproducible:
            return Verdict(Status.NOT_REPRODUCIBLE, reason="The benchmark cannot be run with the bench workflow.")
        if claim is not None:
            return Verdict(Status.CLAIM_ONLY, reason="A score is claimed but no run has been uploaded.")
        return Verdict(Status.GAP, reason="No claim and no run yet.")
    if claim is None:
        return Verdict(Status.RUNS_ONLY, reason="Runs exist but no score is claimed to compare with.")
    if measured is None or measured.mean is None:
        return Verdict(Status.INCONCLUSIVE, reason="Every uploaded trial errored: nothing was measured.")
    delta = measured.mean - claim
    if measured.stderr is None:
        return Verdict(Status.INCONCLUSIVE, delta=delta,
                       reason=f"Fewer than {MIN_TASKS_FOR_ERROR} scored tasks: the error cannot be estimated.")
    combined = math.hypot(measured.stderr, claim_stderr or 0.0)
    threshold = max(tolerance_abs, Z95 * combined)
    if abs(delta) <= threshold:
        return Verdict(Status.REPRODUCED, delta, combined, threshold,
                       reason=f"|delta| = {abs(delta):.4g} <= {threshold:.4g}.")
    return Verdict(Status.DISCREPANT, delta, combined, threshold,
                   reason=f"|delta| = {abs(delta):.4g} > {threshold:.4g}.")
