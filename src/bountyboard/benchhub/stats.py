"""The statistics of the benchmark hub, as pure functions (no database, no HTTP).

Counting follows Harbor 0.25.0 (``harbor.metrics.mean.Mean`` over every trial of an eval and
``harbor.utils.pass_at_k``) so that a score here equals the ``stats.evals[*].metrics`` Harbor writes:

* every trial counts once; a trial without rewards (errored before the verifier wrote any) or with
  empty rewards (``{}``) counts 0 for every key, and a trial lacking one key counts 0 for that key;
* with several reward keys each key gets its own mean; with one key Harbor names the mean ``mean``
  (:func:`as_harbor_metric` converts), here it keeps its reward key;
* ``pass@k`` only for single-key binary rewards, k in {2, 4, 8, ...} and {5, 10, 15, ...} up to the
  fewest attempts of any task, averaged over tasks with the unbiased estimator.

Uncertainty treats tasks as the independent units (attempts of one task are correlated): the
score's variance is the cluster-robust variance of a ratio mean, turned into an effective sample
size, and the interval is Jeffreys' (Beta quantiles) on the metric's range rescaled to [0, 1], so it
never leaves the range and behaves at 0 and 1. A claim is ``reproduced`` when a two one-sided test
(TOST) at 5% puts the score within ``claim ± tolerance`` (the 90% interval lies inside that band),
``discrepant`` when the 95% interval lies outside the band, ``inconclusive`` otherwise. A variance
estimated from the tasks' spread (any score but one pass/fail attempt per task) widens the interval
for its ``n - 1`` degrees of freedom and decides nothing from fewer tasks than a sign-flip test needs.

The decisions made on these estimates (verdicts on claims, paired comparisons, ranks) are in
:mod:`.decisions`.

docs/benchhub.md has worked examples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scipy.special import betaincinv, ndtri, stdtrit

# Harbor's result.json may carry integer rewards; both count as numbers.
Rewards = Mapping[str, float]
# One trial as the CLI and the service see it: (task id, verifier rewards or None, error or None).
# None: the verifier gave no reward; {}: it gave one without keys (Harbor counts it in n_trials).
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
    one of ``keys`` when the trials carry any; then ``reward`` when the trials carry it (Harbor's
    uploader, ``_extract_primary_reward``, takes ``reward`` first), else the registry metric's key
    when they carry it, else the only key. No key at all (every trial errored): the override, the
    registry key or ``reward``, whose mean is 0.
    """
    if override is not None:
        if keys and override not in keys:
            raise AmbiguousPrimaryKeyError(f"the trials carry no reward key {override!r} (keys: {', '.join(keys)})")
        return override
    if not keys:
        return registry_key or DEFAULT_PRIMARY_KEY
    for candidate in (DEFAULT_PRIMARY_KEY, registry_key):
        if candidate is not None and candidate in keys:
            return candidate
    if len(keys) == 1:
        return keys[0]
    raise AmbiguousPrimaryKeyError(
        f"the trials carry several reward keys ({', '.join(keys)}) and none is `{DEFAULT_PRIMARY_KEY}`"
        f"{f' or {registry_key!r}' if registry_key else ''}: name the primary one (bench push --metric KEY)"
    )


def pass_at_k(trials: Iterable[TrialRow]) -> dict[int, float]:
    """Harbor's ``pass@k``: empty unless every rewarded trial has one key valued 0 or 1 (so a
    verifier's empty reward, ``{}``, means no pass@k); a trial without rewards counts as a failure."""
    attempts: Counter[str] = Counter()
    passes: Counter[str] = Counter()
    for task_id, rewards, _ in trials:
        attempts[task_id] += 1
        if rewards is None:
            continue
        if len(rewards) != 1:
            return {}
        value = next(iter(rewards.values()))
        if value not in (0, 1):
            return {}
        passes[task_id] += int(value)
    if not attempts:
        return {}
    fewest = min(attempts.values())
    return {
        k: math.fsum(_task_pass_at_k(n, passes[task_id], k) for task_id, n in attempts.items()) / len(attempts)
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


# Per-task tallies --------------------------------------------------------------------------------

# Fewer tasks than this and the spread between tasks cannot be estimated.
MIN_TASKS_FOR_ERROR = 2


@dataclass
class TaskTally:
    """Per task: the sum of the primary reward over its trials and the number of trials (an errored
    trial without rewards adds 0 and 1, as in Harbor's mean). Two flat maps rather than a pair per
    task, so a tally of 10,000 tasks is two objects for the collector, stored as JSON alike."""

    sums: dict[str, float] = field(default_factory=dict)
    trials: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.trials)

    def add(self, task_id: str, total: float, trials: int) -> None:
        self.sums[task_id] = self.sums.get(task_id, 0.0) + total
        self.trials[task_id] = self.trials.get(task_id, 0) + trials

    def merge(self, other: TaskTally) -> None:
        """Pool another tally in: the same task id is the same cluster."""
        for task_id, trials in other.trials.items():
            self.add(task_id, other.sums[task_id], trials)

    def cells(self) -> Iterator[tuple[float, int]]:
        return ((self.sums[task_id], trials) for task_id, trials in self.trials.items())

    def as_json(self) -> dict[str, Any]:
        return {"sums": self.sums, "trials": self.trials}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskTally:
        return cls(dict(data.get("sums", {})), dict(data.get("trials", {})))


def primary_value(rewards: Rewards | None, key: str) -> float:
    """What one trial adds to the score: its value of ``key``, 0 when it has none."""
    return float(rewards.get(key, 0.0)) if rewards else 0.0


def task_tally(trials: Iterable[TrialRow], key: str) -> TaskTally:
    tally = TaskTally()
    for task_id, rewards, _ in trials:
        tally.add(task_id, primary_value(rewards, key), 1)
    return tally


@dataclass(frozen=True)
class Moments:
    """Sums over tasks of a tally, enough for the mean and its cluster-robust variance in O(1).

    With ``S`` a task's reward sum and ``M`` its trial count: ``n`` tasks, ``Σ M``, ``Σ S``,
    ``Σ S²``, ``Σ S·M`` and ``Σ M²``. Every sum is given (by :meth:`of`, or read back from a stored pool):
    none defaults, so one left out cannot pass for zero.
    """

    n_tasks: int
    trials: float
    total: float
    total_sq: float
    total_x_trials: float
    trials_sq: float

    @classmethod
    def of(cls, tally: TaskTally) -> Moments:
        cells = tally.cells  # iterated once per sum: no list of pairs kept alive
        return cls(
            n_tasks=len(tally), trials=math.fsum(m for _, m in cells()),
            total=math.fsum(s for s, _ in cells()), total_sq=math.fsum(s * s for s, _ in cells()),
            total_x_trials=math.fsum(s * m for s, m in cells()), trials_sq=math.fsum(m * m for _, m in cells()),
        )

    @property
    def mean(self) -> float | None:
        """Harbor's mean: every trial weighs the same."""
        return self.total / self.trials if self.trials else None

    @property
    def variance(self) -> float | None:
        """Cluster-robust (by task) variance of :attr:`mean`, with the ``n / (n - 1)`` correction.

        ``n / (n - 1) · Σ (S - mean·M)² / (Σ M)²``; undefined for fewer than two tasks.
        """
        mean = self.mean
        if mean is None or self.n_tasks < MIN_TASKS_FOR_ERROR:
            return None
        residual = self.total_sq - 2 * mean * self.total_x_trials + mean * mean * self.trials_sq
        return max(residual, 0.0) * self.n_tasks / (self.n_tasks - 1) / (self.trials * self.trials)



# Intervals and decisions ---------------------------------------------------------------------------

EQUIVALENCE_CONFIDENCE = 0.90  # TOST at 5%: both one-sided tests at 5% <=> the 90% interval
DIFFERENCE_CONFIDENCE = 0.95  # the band is excluded at 5%, whichever side the data fall on
MAX_EXTRA_TASKS = 1_000_000
# A spread near the smallest float makes p(1-p)/var astronomically large, and the Beta quantiles of such
# sizes come back NaN. No measurement comes near this many observations; the interval is a point anyway.
MAX_EFFECTIVE_SIZE = 2.0**53


@dataclass(frozen=True)
class MetricRange:
    low: float = 0.0
    high: float = 1.0

    def to_unit(self, value: float) -> float:
        return min(max((value - self.low) / (self.high - self.low), 0.0), 1.0)

    def from_unit(self, value: float) -> float:
        return self.low + value * (self.high - self.low)


def distribution_free_minimum(confidence: float) -> int:
    """The fewest tasks from which any test can reach ``confidence`` without assuming a shape for
    the task scores: a sign-flip test of n tasks gives at least ``2^-n`` on one side, so n must reach
    ``log2(2 / (1 - confidence))`` (5 tasks at 90%, 6 at 95%)."""
    return math.ceil(math.log2(2 / (1 - confidence)))


def small_sample_size(size: float, tasks: float, confidence: float) -> float:
    """Korn and Graubard's degrees-of-freedom adjustment of an effective size: ``size · (z / t)²`` with
    the two-sided quantiles at ``confidence`` of the normal and of Student's t with ``tasks - 1``
    degrees of freedom, so for large sizes the interval is ``mean ± t·se`` rather than ``± z·se``."""
    upper = 1 - (1 - confidence) / 2
    return size * (float(ndtri(upper)) / float(stdtrit(tasks - 1, upper))) ** 2


@dataclass(frozen=True)
class Estimate:
    """A score with its uncertainty. ``binary``: every primary value was the range's min or max."""

    mean: float | None
    variance: float | None
    n_tasks: int
    n_trials: int
    metric: MetricRange = MetricRange()
    binary: bool = True

    @classmethod
    def of(cls, moments: Moments, metric: MetricRange = MetricRange(), binary: bool = True) -> Estimate:
        return cls(moments.mean, moments.variance, moments.n_tasks, int(moments.trials), metric, binary)

    @classmethod
    def of_score(cls, score: float | None, stderr: float | None, n_tasks: int, n_trials: int,
                 metric: MetricRange = MetricRange(), binary: bool = True) -> Estimate:
        """From stored columns (a run's score and standard error)."""
        return cls(score, stderr * stderr if stderr is not None else None, n_tasks, n_trials, metric, binary)

    @property
    def stderr(self) -> float | None:
        return math.sqrt(self.variance) if self.variance is not None else None

    @property
    def variance_is_estimated(self) -> bool:
        """False for pass/fail rewards with one attempt per task: their variance is the binomial one
        the mean implies. Any other score's variance is estimated from the spread of its tasks."""
        return not (self.binary and self.n_trials == self.n_tasks)

    def effective_size(self, scale: float = 1.0) -> float | None:
        """Independent binary observations carrying the same information as these tasks.

        ``p(1 - p) / var`` on the unit scale (the design-effect adjustment of Korn and Graubard);
        binary rewards never count more than their trials; a spread of zero (every task alike, or a
        mean of exactly 0 or 1) counts one observation per task. ``scale`` multiplies the tasks.
        """
        if self.mean is None:
            return None
        p = self.metric.to_unit(self.mean)
        variance = self.variance
        unit_variance = variance / (self.metric.high - self.metric.low) ** 2 if variance is not None else 0.0
        if unit_variance <= 0 or p in (0.0, 1.0):
            return self.n_tasks * scale
        size = min(p * (1 - p) / unit_variance, MAX_EFFECTIVE_SIZE)
        if self.binary:
            size = min(size, self.n_trials)
        return size * scale

    def interval(self, confidence: float, scale: float = 1.0) -> tuple[float, float] | None:
        """Jeffreys' interval at ``confidence`` on the metric's range; None without a score.

        With an estimated variance (:attr:`variance_is_estimated`) the interval is widened for the
        ``tasks - 1`` degrees of freedom of that estimate (:func:`small_sample_size`), and is the whole
        range below :func:`distribution_free_minimum` tasks: so few tasks justify no such confidence.
        """
        size = self.effective_size(scale)
        if size is None or self.mean is None:
            return None
        if self.variance_is_estimated:
            tasks = self.n_tasks * scale
            if tasks < distribution_free_minimum(confidence):
                return self.metric.low, self.metric.high
            size = small_sample_size(size, tasks, confidence)
        p = self.metric.to_unit(self.mean)
        successes, tail = p * size, (1 - confidence) / 2
        low = 0.0 if p == 0.0 else float(betaincinv(successes + 0.5, size - successes + 0.5, tail))
        high = 1.0 if p == 1.0 else float(betaincinv(successes + 0.5, size - successes + 0.5, 1 - tail))
        return self.metric.from_unit(low), self.metric.from_unit(high)

    @property
    def ci95(self) -> tuple[float, float] | None:
        return self.interval(DIFFERENCE_CONFIDENCE)


# One run, counted ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunCount:
    """Everything the hub stores about a run's numbers; ``bench run`` and ``bench push`` print these."""

    primary_metric: str
    metrics: dict[str, float]
    pass_at_k: dict[int, float]
    tally: TaskTally
    # Every trial: the denominator of the means.
    n_trials: int
    # Harbor's ``n_trials``: the trials whose verifier gave rewards (``{}`` included).
    n_rewarded: int
    n_errors: int
    estimate: Estimate

    @property
    def score(self) -> float:
        """Harbor's mean of the primary key (the estimate's mean is the same up to rounding)."""
        return self.metrics[self.primary_metric]


def count_run(trials: Sequence[TrialRow], *, registry_key: str | None = None, override: str | None = None,
              metric: MetricRange = MetricRange()) -> RunCount:
    """Count one eval's trials Harbor's way; raises :class:`AmbiguousPrimaryKeyError`."""
    key = primary_key(reward_keys(rewards for _, rewards, _ in trials), registry_key=registry_key,
                      override=override)
    tally = task_tally(trials, key)
    binary = all(primary_value(rewards, key) in (metric.low, metric.high) for _, rewards, _ in trials)
    return RunCount(
        primary_metric=key, metrics=harbor_metrics(trials, empty_key=key), pass_at_k=pass_at_k(trials),
        tally=tally, n_trials=len(trials), n_rewarded=sum(1 for _, rewards, _ in trials if rewards is not None),
        n_errors=sum(1 for _, _, error in trials if error),
        estimate=Estimate.of(Moments.of(tally), metric, binary),
    )
