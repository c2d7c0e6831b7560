"""``bench push`` for other harnesses' files: an Inspect AI log (``.eval`` or ``.json``) and Every Eval
Ever records become run payloads, counted the way the harness counted them.

Each sample is a task (its id is the task id) and each epoch of it one attempt (trial), rewarded
with the value the harness's own metric averages: Inspect's ``accuracy`` (and ``mean``) turn a score
into a number with ``value_to_float`` (C 1, I 0, P 0.5) and average the samples' epoch means, so the
hub's mean over every attempt is the same number when each sample has the same epochs. A metric
that is not such a mean of per-sample values (a corpus BLEU, an F1 over the pooled answers) cannot
be spread over tasks: the import refuses it rather than invent trials. The task name maps to a
benchmark through the registry's ``aliases``; an unknown one is refused with the known names.

The readers are optional extras; a missing one is named with its install line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bountyboard.benchhub.registry import REGISTRY_PATH
from bountyboard.client.exceptions import BountyboardError

INSTALL = {
    "inspect": "pip install 'bountyboard[inspect]'",
    "every-eval-ever": "pip install 'bountyboard[eee]' (Every Eval Ever needs Python 3.12 or later)",
    "lm-eval": "pip install 'bountyboard[lm-eval]'",
}
# Inspect metrics that are the mean of the samples' values (after value_to_float).
_MEAN_METRICS = ("accuracy", "mean")
# Inspect's epoch reducers under which the hub's mean over every attempt equals the reported metric.
_MEAN_REDUCERS = (None, "mean")
REWARD_KEY = "reward"


class ImportRefused(BountyboardError):
    """The file is of a known kind but cannot become a run (the message says why)."""


@dataclass
class Imported:
    """One run read from another harness's file, and the aggregate that harness reported."""

    body: dict[str, Any]
    reported: float
    metric: str


def detect(path: Path) -> str | None:
    """The format of ``path``: ``inspect``, ``every-eval-ever``, or None (a Harbor job tree)."""
    if path.is_file() and path.suffix == ".eval":
        return "inspect"
    if path.is_file() and path.suffix == ".json":
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(head, dict) and "eval" in head and "version" in head and "status" in head:
            return "inspect"
        if isinstance(head, dict) and "evaluation_results" in head and "schema_version" in head:
            return "every-eval-ever"
    return None


def _aliases() -> dict[str, str]:
    """Task name -> benchmark slug, from the registry shipped with this package."""
    found: dict[str, str] = {}
    for record in json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))["benchmarks"]:
        found[record["slug"]] = record["slug"]
        for alias in record.get("aliases", []):
            found[alias] = record["slug"]
    return found


def benchmark_of(task: str) -> str:
    """The benchmark an imported task name lands on, or a refusal listing the known names."""
    aliases = _aliases()
    for name in (task, task.split("/")[-1]):
        if name in aliases:
            return aliases[name]
    known = sorted(name for name in aliases if name not in aliases.values() or "/" in name)
    raise ImportRefused(f"the task {task!r} is no benchmark of the registry; known task names: "
                        f"{', '.join(known)} (or pass --benchmark SLUG)")


def _usage(model_usage: dict[str, Any]) -> tuple[dict[str, int] | None, float | None]:
    """A sample's tokens and cost, summed over its models."""
    if not model_usage:
        return None, None
    tokens = {"input": sum(u.input_tokens for u in model_usage.values()),
              "output": sum(u.output_tokens for u in model_usage.values())}
    costs = [u.total_cost for u in model_usage.values() if getattr(u, "total_cost", None) is not None]
    return tokens, (math.fsum(costs) if costs else None)


def read_inspect(path: Path, *, benchmark: str | None = None) -> Imported:
    """An Inspect AI log as a run: samples are tasks, epochs attempts, the first scorer the reward."""
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:
        raise ImportRefused(f"reading Inspect AI logs needs inspect-ai: {INSTALL['inspect']}") from exc
    log = read_eval_log(str(path))
    if log.status != "success" or log.results is None or not log.results.scores:
        raise ImportRefused(f"{path.name}: the Inspect run did not finish ({log.status}); only finished logs "
                            "carry the scores to import")
    score = log.results.scores[0]
    metric = next((name for name in _MEAN_METRICS if name in score.metrics), None)
    if metric is None:
        reported = ", ".join(score.metrics) or "no metric"
        raise ImportRefused(f"{path.name}: the scorer {score.name!r} reports {reported}; none is a mean of "
                            "per-sample values (accuracy, mean), so it cannot be counted per task")
    reducer = getattr(score, "reducer", None)
    if reducer not in _MEAN_REDUCERS:
        raise ImportRefused(f"{path.name}: epochs reduced with {reducer!r}; only the mean over epochs is counted "
                            "per attempt")
    to_float = value_to_float()
    trials = []
    for sample in log.samples or []:
        tokens, cost = _usage(sample.model_usage)
        value = (sample.scores or {}).get(score.name)
        trial: dict[str, Any] = {"taskId": str(sample.id), "trialName": f"{sample.id}__epoch{sample.epoch}",
                                 "tokens": tokens, "costUsd": cost}
        if value is not None:
            trial["rewards"] = {REWARD_KEY: to_float(value.value)}
        if sample.error is not None or value is None:
            trial["error"] = (sample.error.message if sample.error is not None else "no score")[:10_000]
        trials.append(trial)
    if not trials:
        raise ImportRefused(f"{path.name}: the log carries no samples (written with --no-log-samples?)")
    version = log.eval.packages.get("inspect_ai", "")
    dataset = log.eval.dataset
    solver = log.eval.solver or "+".join(step.solver for step in log.plan.steps)
    body = {
        "benchmark": benchmark or benchmark_of(log.eval.task),
        "model": log.eval.model,
        # The harness is the agent (so a log and its Every Eval Ever record pool together); the solver
        # plan is its version.
        "agent": {"name": "inspect_ai", "version": solver[:100]},
        "harness": {"name": "inspect_ai", "version": version},
        "dataset": {"ref": dataset.location or dataset.name or log.eval.task, "revision": None},
        "trials": trials,
        "primaryMetric": REWARD_KEY,
        "source": {"format": "inspect", "tool": "inspect_ai", "version": version},
    }
    return Imported(body, float(score.metrics[metric].value), metric)


def _eee_validator() -> Any:
    try:
        from every_eval_ever.validator.validation_core import validate_file
    except ImportError as exc:
        raise ImportRefused(f"reading Every Eval Ever records needs every-eval-ever: {INSTALL['every-eval-ever']}") \
            from exc
    return validate_file


def _eee_validate(*paths: Path) -> None:
    """Every Eval Ever's own validator (its schema checks; the layout rules of its repository aside)."""
    validate_file = _eee_validator()
    for path in paths:
        report = validate_file(path)
        if not report.valid:
            first = report.errors[0] if report.errors else {}
            raise ImportRefused(f"{path.name} fails Every Eval Ever's validator: "
                                f"{first.get('loc')}: {first.get('msg')}")


# Every Eval Ever metric ids whose score is the mean of the instances' scores.
_EEE_MEAN_METRICS = frozenset({"accuracy", "acc", "exact_match", "mean"})


def read_eee(path: Path, *, benchmark: str | None = None) -> Imported:
    """An Every Eval Ever aggregate record and its instance file as a run: instances are attempts of
    their sample (``metadata.epoch`` or a repeat), the instance score the reward."""
    _eee_validator()
    record = json.loads(path.read_text(encoding="utf-8"))
    detail = record.get("detailed_evaluation_results") or {}
    samples = path.with_name(Path(detail.get("file_path") or "").name) if detail.get("file_path") else None
    if samples is None or not samples.is_file():
        raise ImportRefused(f"{path.name}: no instance file beside it (detailed_evaluation_results.file_path); "
                            "per-sample scores are needed to count per task")
    _eee_validate(path, samples)
    results = record["evaluation_results"]
    result = next((r for r in results if r["metric_config"].get("metric_id") in _EEE_MEAN_METRICS), None)
    if result is None:
        ids = ", ".join(str(r["metric_config"].get("metric_id")) for r in results)
        raise ImportRefused(f"{path.name}: its metrics ({ids}) are none a mean of per-sample scores "
                            f"({', '.join(sorted(_EEE_MEAN_METRICS))}), so they cannot be counted per task")
    trials = []
    seen: dict[str, int] = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("evaluation_result_id") != result.get("evaluation_result_id"):
            continue
        sample = str(row["sample_id"])
        attempt = str((row.get("metadata") or {}).get("epoch") or seen.get(sample, 0) + 1)
        seen[sample] = seen.get(sample, 0) + 1
        usage = row.get("token_usage") or {}
        trial: dict[str, Any] = {"taskId": sample, "trialName": f"{sample}__epoch{attempt}",
                                 "rewards": {REWARD_KEY: float(row["evaluation"]["score"])}}
        if usage.get("input_tokens") is not None and usage.get("output_tokens") is not None:
            trial["tokens"] = {"input": usage["input_tokens"], "output": usage["output_tokens"]}
        if row.get("error"):
            trial["error"] = str(row["error"])[:10_000]
        trials.append(trial)
    library = record.get("eval_library") or {}
    version = str(library.get("version", "")).split(":")[-1]
    source = result.get("source_data") or {}
    body = {
        "benchmark": benchmark or benchmark_of(result["evaluation_name"]),
        "model": record["model_info"]["id"],
        "agent": {"name": library.get("name") or "unknown", "version": ""},
        "harness": {"name": library.get("name") or "unknown", "version": version},
        "dataset": {"ref": source.get("hf_repo") or source.get("dataset_name") or result["evaluation_name"],
                    "revision": source.get("hf_revision")},
        "trials": trials,
        "primaryMetric": REWARD_KEY,
        "source": {"format": "every-eval-ever", "tool": library.get("name") or "",
                   "version": str(record.get("schema_version", ""))},
    }
    return Imported(body, float(result["score_details"]["score"]), str(result["metric_config"]["metric_id"]))


def read(path: Path, kind: str, *, benchmark: str | None = None) -> Imported:
    """Read a file :func:`detect` named."""
    if kind == "inspect":
        return read_inspect(path, benchmark=benchmark)
    if kind == "every-eval-ever":
        return read_eee(path, benchmark=benchmark)
    raise ImportRefused(f"{path.name}: no reader for {kind}")
