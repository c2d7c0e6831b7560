"""A stored run in other tools' forms: Every Eval Ever (schema 0.3.0) and a Hugging Face model repo's
``.eval_results/*.yaml`` entry.

Every Eval Ever: one aggregate record and its instances.

``GET /v1/bench/runs/{id}?format=every-eval-ever`` answers ``{"aggregate", "instances",
"aggregatePath", "instancesPath"}``; written at those paths (Every Eval Ever's repository layout)
they pass its validator. Each trial is one instance (its task the sample id, its attempt in ``metadata.epoch``),
scored with the run's primary reward; the aggregate's score is the hub's score of the run. The hub
keeps no prompts or answers, so ``input`` and ``output`` are empty.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from bountyboard.benchhub.models import Run
from bountyboard.error_codes import ErrorCode
from bountyboard.errors import invalid

SCHEMA_VERSION = "0.3.0"


def _instances(run: Run, result_id: str, evaluation_id: str) -> list[dict[str, Any]]:
    rows = []
    attempts: dict[str, int] = {}
    for trial in json.loads(run.trials):
        task = trial["taskId"]
        attempts[task] = attempts.get(task, 0) + 1
        rewards = trial.get("rewards") or {}
        score = float(rewards.get(run.primary_metric, 0.0))
        row: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": run.model,
            "evaluation_name": run.benchmark_slug, "evaluation_result_id": result_id, "sample_id": task,
            "interaction_type": "single_turn", "input": {"raw": "", "reference": []}, "output": {"raw": []},
            "answer_attribution": [],
            "evaluation": {"score": score, "is_correct": score >= 1.0},
            "error": trial.get("error"), "metadata": {"epoch": str(attempts[task]), "trial": trial["trialName"]},
        }
        tokens = trial.get("tokens")
        if tokens:
            row["token_usage"] = {"input_tokens": tokens["input"], "output_tokens": tokens["output"],
                                  "total_tokens": tokens["input"] + tokens["output"]}
        rows.append(row)
    return rows


def every_eval_ever(run: Run, record: dict[str, Any], run_url: str) -> dict[str, Any]:
    """The run as an Every Eval Ever aggregate record and its instance rows."""
    metric = record["metric"]
    evaluation_id = f"{run.benchmark_slug}/{run.model_key.replace('/', '_')}/{run.id}"
    result_id = f"{run.benchmark_slug}:{run.primary_metric}"
    instances = _instances(run, result_id, evaluation_id)
    text = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in instances)
    developer = run.model.split("/")[0] if "/" in run.model else "unknown"
    # Every Eval Ever's repository layout: data/<benchmark>/<developer>/<model>/<uuid>.json beside
    # <uuid>_samples.jsonl; the uuid (version 4, as the layout asks) is drawn from the run's URL.
    folder = f"data/{run.benchmark_slug}/{developer}/{run.model.split('/')[-1]}"
    name = str(uuid.UUID(bytes=hashlib.sha256(run_url.encode()).digest()[:16], version=4))
    created = f"{run.created_at.timestamp():.1f}"
    aggregate: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "evaluation_timestamp": created,
        "retrieved_timestamp": created,
        "source_metadata": {"source_name": "bountyboard", "source_type": "evaluation_run",
                            "source_organization_name": "bountyboard", "source_organization_url": run_url,
                            "evaluator_relationship": "third_party"},
        "eval_library": {"name": run.harness_name, "version": run.harness_version or "unknown"},
        "model_info": {"name": run.model, "id": run.model, "developer": developer,
                       "additional_details": {"bountyboard_model_key": run.model_key, "deployment_type": "unknown",
                                              "model_availability": "unknown"}},
        "evaluation_results": [{
            "evaluation_result_id": result_id, "evaluation_name": run.benchmark_slug,
            "source_data": {"dataset_name": run.dataset_ref, "source_type": "other",
                            "additional_details": {"revision": run.dataset_revision or ""}},
            "evaluation_timestamp": created,
            "metric_config": {"evaluation_description": f"mean {run.primary_metric} over every trial (Harbor's rule)",
                              "metric_id": metric["name"], "metric_name": metric["name"],
                              "lower_is_better": not metric["higherIsBetter"], "score_type": "continuous",
                              "min_score": float(metric["min"]), "max_score": float(metric["max"])},
            "score_details": {"score": run.score if run.score is not None else 0.0},
        }],
        "detailed_evaluation_results": {
            "format": "jsonl", "file_path": f"{folder}/{name}_samples.jsonl", "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode()).hexdigest(), "total_rows": len(instances)},
    }
    return {"aggregate": aggregate, "instances": instances, "aggregatePath": f"{folder}/{name}.json",
            "instancesPath": f"{folder}/{name}_samples.jsonl"}


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def hf_dataset(record: dict[str, Any]) -> tuple[str, str] | None:
    """The Hugging Face dataset id and task id a benchmark's results are reported against: its rows'
    dataset (``harbor.adapter.dataset``) and that dataset's config, else ``default``."""
    adapter = (record.get("harbor") or {}).get("adapter") or {}
    if adapter.get("kind") != "hf_rows" or not adapter.get("dataset") or "/" not in str(adapter["dataset"]):
        return None
    return str(adapter["dataset"]), str(adapter.get("config") or "default")


def hf_eval_results(run: Run, record: dict[str, Any], run_page: str) -> str:
    """The run as a ``.eval_results/<benchmark>.yaml`` file of a Hugging Face model repo: one entry with the
    fields Hugging Face's "Evaluation Results" page documents (``dataset.id``, ``dataset.task_id``,
    ``dataset.revision`` when the run pins the dataset to a commit, ``value``, ``date``, ``source.url`` and
    ``source.name``, ``notes``). A metric on [0, 1] is given in percent, as the Hub's leaderboards show
    scores; the source is the run's page on the hub, with its per-task outcomes."""
    found = hf_dataset(record)
    if found is None:
        raise invalid(f"the benchmark {run.benchmark_slug!r} is not read from a Hugging Face dataset, so its results "
                      "have no dataset to be reported against", code=ErrorCode.NO_HF_DATASET)
    if run.score is None:
        raise invalid(f"the run {run.id} has no score to report", code=ErrorCode.NO_HF_DATASET)
    dataset_id, task_id = found
    metric = record["metric"]
    percent = float(metric["min"]) == 0 and float(metric["max"]) == 1
    value = round(run.score * 100, 4) if percent else run.score
    revision = run.dataset_revision if run.dataset_revision and _COMMIT.match(run.dataset_revision) \
        and run.dataset_ref == dataset_id else None
    notes = (f"{run.agent_name} via {run.harness_name}, {run.n_tasks} tasks, {run.n_trials} trials; "
             f"mean {metric['name']}{' in percent' if percent else ''}, counted by bountyboard")
    lines = ["- dataset:", f"    id: {json.dumps(dataset_id)}", f"    task_id: {json.dumps(task_id)}"]
    if revision:
        lines.append(f"    revision: {json.dumps(revision)}")
    lines += [f"  value: {value!r}", f"  date: {json.dumps(run.created_at.date().isoformat())}", "  source:",
              f"    url: {json.dumps(run_page)}", f"    name: {json.dumps(f'bountyboard run {run.id}')}",
              f"  notes: {json.dumps(notes)}"]
    # JSON scalars are YAML scalars: the file needs no YAML writer.
    return "\n".join(lines) + "\n"
