"""``bench push`` for other harnesses' files: an Inspect AI log (``.eval`` or ``.json``), an
lm-evaluation-harness output (``results_*.json`` beside its ``samples_<task>_*.jsonl``) and Every Eval
Ever records become run payloads, counted the way the harness counted them.

Each sample is a task (its id is the task id) and each epoch of it one attempt (trial), rewarded
with the value the harness's own metric averages: Inspect's ``accuracy`` (and ``mean``) turn a score
into a number with ``value_to_float`` (C 1, I 0, P 0.5) and average the samples' epoch means, so the
hub's mean over every attempt is the same number when each sample has the same epochs. A metric
that is not such a mean of per-sample values (a corpus BLEU, an F1 over the pooled answers) cannot
be spread over tasks: the import refuses it rather than invent trials. The task name maps to a
benchmark through the registry's ``aliases``; an unknown one is refused with the known names.

lm-eval scores each document once per filter (its ``repeats`` are reduced by the filter before the
metric), so each document is one task with one attempt, rewarded with the per-document value of
the counted metric under the counted filter; the metric must be aggregated with ``mean``.

The readers of Inspect and Every Eval Ever are optional extras, a missing one named with its
install line; lm-eval's files are plain JSON and need no package to be read.
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


def _json_head(path: Path) -> dict[str, Any] | None:
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return head if isinstance(head, dict) else None


def _is_lm_eval(head: dict[str, Any] | None) -> bool:
    return head is not None and "results" in head and "configs" in head and "n-shot" in head


def _lm_eval_files(path: Path) -> list[Path]:
    """lm-eval's results files: the one given, or every ``results_*.json`` under a directory."""
    if path.is_file():
        return [path]
    return [found for found in sorted(path.rglob("results_*.json")) if _is_lm_eval(_json_head(found))]


def detect(path: Path) -> str | None:
    """The format of ``path``: ``inspect``, ``lm-eval``, ``every-eval-ever``, or None (a Harbor job tree)."""
    if path.is_file() and path.suffix == ".eval":
        return "inspect"
    if path.is_dir():
        return "lm-eval" if _lm_eval_files(path) else None
    if path.is_file() and path.suffix == ".json":
        head = _json_head(path)
        if head is None:
            return None
        if "eval" in head and "version" in head and "status" in head:
            return "inspect"
        if "evaluation_results" in head and "schema_version" in head:
            return "every-eval-ever"
        if _is_lm_eval(head):
            return "lm-eval"
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
_EEE_MEAN_METRICS = frozenset({"accuracy", "acc", "exact_match", "exact-match", "mean"})


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
    # lm-eval's converter names a filtered result `<task>/<filter>` and its id `<metric>:<filter>`.
    task = result["evaluation_name"].removesuffix("/" + str(result.get("evaluation_result_id", "")).partition(":")[2])
    body = {
        "benchmark": benchmark or benchmark_of(task),
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


# lm-eval metrics that are per-document values averaged when the task's config states no aggregation
# (lm-eval's own defaults), and the ones counted first when a task reports several.
_LM_EVAL_MEAN_DEFAULTS = ("acc", "exact_match", "acc_norm")
_LM_EVAL_FIXED_KEYS = frozenset({"alias", "name", "sample_len", "sample_count", "samples"})


def _lm_eval_metric(task: str, reported: dict[str, Any], config: dict[str, Any],
                    where: str) -> tuple[str, str, str]:
    """The ``(metric, filter, results key)`` an lm-eval task is counted with: ``acc``, else ``exact_match``,
    else the first other metric aggregated with ``mean``; the first filter that reports it."""
    stated = {entry["metric"]: entry.get("aggregation") for entry in config.get("metric_list") or []
              if isinstance(entry, dict) and isinstance(entry.get("metric"), str)}
    keys = [key for key in reported if key not in _LM_EVAL_FIXED_KEYS and "_stderr," not in key
            and isinstance(reported[key], int | float)]

    def is_mean(metric: str) -> bool:
        aggregation = stated.get(metric)
        return aggregation == "mean" or (aggregation is None and metric in _LM_EVAL_MEAN_DEFAULTS)

    countable: list[tuple[str, str, str]] = []
    for key in keys:
        metric, _, flt = key.partition(",")
        if is_mean(metric):
            countable.append((metric, flt or "none", key))
    if not countable:
        said = ", ".join(f"{key} ({stated.get(key.split(',')[0]) or 'its own aggregation'})" for key in keys)
        raise ImportRefused(f"{where}: the task {task!r} reports {said or 'no metric'}; none is a mean of "
                            "per-document values, so it cannot be counted per task")
    order = {name: rank for rank, name in enumerate(_LM_EVAL_MEAN_DEFAULTS[:2])}
    return min(countable, key=lambda found: order.get(found[0], len(order)))


def _lm_eval_task(results_file: Path, data: dict[str, Any], task: str, benchmark: str | None) -> Imported:
    config = data["configs"][task]
    reported = data["results"][task]
    metric, flt, key = _lm_eval_metric(task, reported, config, results_file.name)
    samples = results_file.with_name(f"samples_{task}_{results_file.stem.removeprefix('results_')}.jsonl")
    if not samples.is_file():
        raise ImportRefused(f"{results_file.name}: no {samples.name} beside it; per-document scores are needed to "
                            "count per task (run lm-eval with --log_samples)")
    trials = []
    attempts: dict[str, int] = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else {}
        if row.get("filter") != flt or not isinstance(row.get(metric), int | float):
            continue
        doc = str(row["doc_id"])
        attempts[doc] = attempts.get(doc, 0) + 1
        trials.append({"taskId": doc, "trialName": f"{task}__doc{doc}__{attempts[doc]}",
                       "rewards": {REWARD_KEY: float(row[metric])}})
    if not trials:
        raise ImportRefused(f"{samples.name}: no document scored with {metric} under the filter {flt!r}")
    version = str(data.get("lm_eval_version") or "")
    run_config = data.get("config") or {}
    kwargs = config.get("dataset_kwargs") or {}
    files = kwargs.get("data_files")
    local = Path(str(next(iter(files.values())) if isinstance(files, dict) else files)).name if files else None
    ref = config.get("dataset_path") if config.get("dataset_path") not in (None, "json", "csv", "parquet") else local
    body = {
        "benchmark": benchmark or benchmark_of(task),
        "model": data.get("model_name") or run_config.get("model") or "unknown",
        "agent": {"name": "lm_eval", "version": f"{task} {data['n-shot'].get(task, 0)}-shot {key}"[:100]},
        "harness": {"name": "lm_eval", "version": version},
        "dataset": {"ref": "/".join(filter(None, [str(ref or task), config.get("dataset_name")])),
                    "revision": kwargs.get("revision") or (data.get("task_hashes") or {}).get(task) or None},
        "trials": trials,
        "primaryMetric": REWARD_KEY,
        "source": {"format": "lm-eval", "tool": "lm_eval", "version": version},
    }
    return Imported(body, float(reported[key]), key)


def read_lm_eval(path: Path, *, benchmark: str | None = None) -> list[Imported]:
    """An lm-eval output (a results file, or a directory of them) as one run per task it evaluated:
    groups are left out, their tasks imported one by one."""
    runs: list[Imported] = []
    for results_file in _lm_eval_files(path):
        data = json.loads(results_file.read_text(encoding="utf-8"))
        runs.extend(_lm_eval_task(results_file, data, task, benchmark) for task in data["configs"])
    if benchmark is not None and len(runs) > 1:
        raise ImportRefused(f"{path.name}: --benchmark names one benchmark, and this output has {len(runs)} tasks; "
                            "push their results files one by one")
    return runs


def _as_reported(found: Imported, where: str) -> Imported:
    """The run, when the hub's score of it (the mean over every attempt, one without a reward counting
    0) is the aggregate the harness reported; refused otherwise, since the hub would count another."""
    trials = found.body["trials"]
    mean = math.fsum((trial.get("rewards") or {}).get(REWARD_KEY, 0.0) for trial in trials) / len(trials)
    if abs(mean - found.reported) > 1e-9:
        raise ImportRefused(f"{where}: its {len(trials)} attempts average {mean:.6g}, but the harness reported "
                            f"{found.metric} = {found.reported:.6g} (samples with unequal epochs, or without a "
                            "score?); the hub would count another score, so nothing is uploaded")
    return found


def read(path: Path, kind: str, *, benchmark: str | None = None) -> list[Imported]:
    """Read a file :func:`detect` named: one run, or one per task of an lm-eval output, each counted as
    the harness counted it."""
    if kind == "inspect":
        found = [read_inspect(path, benchmark=benchmark)]
    elif kind == "lm-eval":
        found = read_lm_eval(path, benchmark=benchmark)
    elif kind == "every-eval-ever":
        found = [read_eee(path, benchmark=benchmark)]
    else:
        raise ImportRefused(f"{path.name}: no reader for {kind}")
    return [_as_reported(run, path.name) for run in found]
