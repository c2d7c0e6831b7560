"""The hub's counting in one room: a run's trials counted with Harbor's rule (:mod:`.stats`) against
its benchmark's metric, values the metric cannot take refused, and the counted numbers copied onto
the run's row. An upload (:mod:`.service`) and the migrations that recount (:mod:`.pools`) both count
here; pooling (:mod:`.pools`) only folds counted runs together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from bountyboard.benchhub import stats
from bountyboard.benchhub.models import Run
from bountyboard.benchhub.schemas import RunUpload, TrialUpload
from bountyboard.errors import ErrorCode, invalid

_MAX_REPORTED_ERRORS = 20


def metric_range(record: dict[str, Any]) -> stats.MetricRange:
    return stats.MetricRange(float(record["metric"]["min"]), float(record["metric"]["max"]))


class TrialRows(Sequence[stats.TrialRow]):
    """The validated trial dicts seen as counting rows, made on the fly: no list of 10,000 tuples
    stays alive while an upload is counted."""

    def __init__(self, trials: list[TrialUpload]) -> None:
        self.trials = trials

    def __len__(self) -> int:
        return len(self.trials)

    @overload
    def __getitem__(self, index: int) -> stats.TrialRow: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[stats.TrialRow]: ...
    def __getitem__(self, index: int | slice) -> stats.TrialRow | Sequence[stats.TrialRow]:
        if isinstance(index, slice):
            return [self._row(trial) for trial in self.trials[index]]
        return self._row(self.trials[index])

    def __iter__(self) -> Iterator[stats.TrialRow]:
        return map(self._row, self.trials)

    @staticmethod
    def _row(trial: TrialUpload) -> stats.TrialRow:
        return trial["taskId"], trial.get("rewards"), trial.get("error")


def count_upload(upload: RunUpload, record: dict[str, Any]) -> stats.RunCount:
    """Count the trials Harbor's way; refuse values the benchmark's metric cannot take."""
    metric = record["metric"]
    rows = TrialRows(upload.trials)
    try:
        count = stats.count_run(rows, registry_key=metric["name"], override=upload.primaryMetric,
                                metric=metric_range(record))
    except stats.AmbiguousPrimaryKeyError as exc:
        raise invalid(f"No primary metric: {exc}.", [{"field": "primaryMetric", "message": str(exc)}],
                      code=ErrorCode.AMBIGUOUS_METRIC) from exc
    low, high = metric["min"], metric["max"]
    errors: list[dict[str, str]] = []
    key = count.primary_metric
    for index, (_, rewards, _) in enumerate(rows):
        if rewards and key in rewards and not low <= rewards[key] <= high:
            errors.append({"field": f"trials.{index}.rewards.{key}",
                           "message": f"{rewards[key]} is outside [{low}, {high}] of {metric['name']}"})
    if upload.claim is not None and not low <= upload.claim.value <= high:
        errors.append({"field": "claim.value", "message": f"{upload.claim.value} is outside [{low}, {high}]"})
    if errors:
        shown = errors[:_MAX_REPORTED_ERRORS]
        raise invalid(f"{len(errors)} value(s) are impossible for {record['slug']}: {shown[0]['message']}.",
                      shown, code=ErrorCode.IMPOSSIBLE_SCORE)
    return count


def store_count(run: Run, count: stats.RunCount) -> None:
    """Copy a run's counted numbers onto its row."""
    run.primary_metric, run.metrics = count.primary_metric, count.metrics
    run.pass_at_k = {str(k): value for k, value in count.pass_at_k.items()}
    run.task_tally, run.n_tasks = count.tally.as_json(), len(count.tally)
    run.n_trials, run.n_rewarded, run.n_errors = count.n_trials, count.n_rewarded, count.n_errors
    run.binary = count.estimate.binary
    run.score, run.stderr = count.score, count.estimate.stderr


def trial_rows(trials: Iterable[dict[str, Any]]) -> list[stats.TrialRow]:
    """Stored (wire-shaped) trials as counting rows."""
    return [(trial["taskId"], trial.get("rewards"), trial.get("error")) for trial in trials]


def recount(run: Run, record: dict[str, Any]) -> None:
    """Count a stored run again with Harbor's rule (migrations)."""
    rows = trial_rows(json.loads(run.trials))
    store_count(run, stats.count_run(rows, registry_key=record["metric"]["name"], metric=metric_range(record)))
