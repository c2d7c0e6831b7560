"""Which metric and filter an lm-eval output is counted with, and which of its entries become runs,
on files laid out as lm-eval writes them (the real tool's output is pushed in
tests/runner/test_imports_lm_eval.py; these shapes, several filters and a group, it does not make)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bountyboard.runner import imports

STAMP = "2026-11-26T00-00-00.000000"


def _output(tmp: Path, results: dict[str, Any], configs: dict[str, Any], samples: dict[str, list[dict[str, Any]]],
            group_subtasks: dict[str, list[str]] | None = None) -> Path:
    folder = tmp / "acme__calc-1"
    folder.mkdir()
    (folder / f"results_{STAMP}.json").write_text(json.dumps({
        "results": results, "configs": configs, "n-shot": {task: 0 for task in configs}, "model_name": "acme/calc-1",
        "group_subtasks": group_subtasks or {task: [] for task in configs}, "lm_eval_version": "0.4.13"}))
    for task, rows in samples.items():
        (folder / f"samples_{task}_{STAMP}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp


def _rows(flt: str, metric: str, values: list[float]) -> list[dict[str, Any]]:
    return [{"doc_id": doc, "filter": flt, "metrics": [metric], metric: value} for doc, value in enumerate(values)]


def test_the_first_filter_of_exact_match_is_counted(tmp_path: Path) -> None:
    results = {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.5, "exact_match_stderr,strict-match": 0.3,
                         "exact_match,flexible-extract": 0.75}}
    configs = {"gsm8k": {"metric_list": [{"metric": "exact_match", "aggregation": "mean"}]}}
    out = _output(tmp_path, results, configs, {"gsm8k": _rows("strict-match", "exact_match", [1, 0, 1, 0])
                                               + _rows("flexible-extract", "exact_match", [1, 1, 1, 0])})
    assert imports.detect(out) == "lm-eval"
    [run] = imports.read(out, "lm-eval")
    assert (run.metric, run.reported) == ("exact_match,strict-match", 0.5)
    assert [trial["rewards"]["reward"] for trial in run.body["trials"]] == [1, 0, 1, 0]
    assert run.body["agent"] == {"name": "lm_eval", "version": "gsm8k 0-shot exact_match,strict-match"}


def test_acc_comes_before_acc_norm_and_a_group_is_left_out(tmp_path: Path) -> None:
    results = {"arc": {"alias": "arc", " ": " "},
               "arc_easy": {"alias": " - arc_easy", "acc_norm,none": 1.0, "acc,none": 0.5},
               "arc_challenge": {"alias": " - arc_challenge", "acc_norm,none": 0.5, "acc,none": 0.0}}
    configs = {"arc_easy": {"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Easy"},
               "arc_challenge": {"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Challenge"}}
    samples = {"arc_easy": [{**acc, "acc_norm": 1.0} for acc in _rows("none", "acc", [1, 0])],
               "arc_challenge": [{**acc, "acc_norm": 0.5} for acc in _rows("none", "acc", [0, 0])]}
    out = _output(tmp_path, results, configs, samples, {"arc": ["arc_easy", "arc_challenge"]})
    runs = imports.read(out, "lm-eval")
    assert [(run.body["benchmark"], run.metric, run.reported) for run in runs] == [
        ("arc-easy", "acc,none", 0.5), ("arc-challenge", "acc,none", 0.0)]
    assert runs[0].body["dataset"] == {"ref": "allenai/ai2_arc/ARC-Easy", "revision": None}
    with pytest.raises(imports.ImportRefused, match="--benchmark names one benchmark"):
        imports.read(out, "lm-eval", benchmark="arc-easy")


def test_a_metric_whose_aggregation_is_not_stated_counts_only_when_lm_eval_averages_it(tmp_path: Path) -> None:
    results = {"gsm8k": {"alias": "gsm8k", "f1,none": 0.5}}
    out = _output(tmp_path, results, {"gsm8k": {}}, {"gsm8k": _rows("none", "f1", [1, 0])})
    with pytest.raises(imports.ImportRefused, match=r"reports f1,none \(its own aggregation\); none is a mean"):
        imports.read(out, "lm-eval")
