"""bench push of lm-evaluation-harness output: a real lm-eval run (its own CLI, a task reading a local
JSONL, a registered model class that answers with fixed outputs, ``--log_samples``), and the Every
Eval Ever records its own lm-eval converter makes of that output, each pushed to a live hub whose
score must equal lm-eval's reported aggregate.

lm-eval comes with the ``lm-eval`` extra (no torch needed); Every Eval Ever lives in .venv-eee
(scripts/import-deps.sh installs both).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import httpx
import pytest

from tests.runner.conftest import bench
from tests.runner.test_imports import EEE_PYTHON, _run_of, convert_and_push_eee
from tests.support.api import Admin

# Five sums; the fixed model answers documents 0, 1 and 3 right: exact_match 0.6.
OUTPUTS = ["2", "4", "7", "8", "11"]
RUN_LM_EVAL = textwrap.dedent("""
    import sys

    from lm_eval.__main__ import cli_evaluate
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model


    @register_model("fixed")
    class FixedLM(LM):
        # Answers document i with the i-th of the outputs in its model_args (colon-separated).
        def __init__(self, pretrained="fixed", outputs="", **kwargs):
            super().__init__()
            self.outputs = outputs.split(":")

        def generate_until(self, requests, disable_tqdm=False):
            return [self.outputs[request.doc_id] for request in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError


    sys.argv = ["lm_eval", *sys.argv[1:]]
    cli_evaluate()
""")
TASK = textwrap.dedent("""
    task: {name}
    dataset_path: json
    dataset_kwargs:
      data_files:
        test: {data}
    test_split: test
    output_type: generate_until
    doc_to_text: "{{{{question}}}}"
    doc_to_target: "{{{{answer}}}}"
    generation_kwargs:
      until: ["\\n"]
    metric_list:
      - metric: {metric}
        aggregation: {aggregation}
        higher_is_better: true
""")


def _lm_eval_output(tmp: Path, *, task: str = "gsm8k", metric: str = "exact_match", aggregation: str = "mean",
                    model: str = "acme/calc-1") -> Path:
    """The output directory of a real lm-eval run (results and samples files)."""
    pytest.importorskip("lm_eval", reason="pip install 'bountyboard[lm-eval]' (scripts/import-deps.sh)")
    data = tmp / "sums.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i}+{i}?", "answer": str(2 * i)}) + "\n"
                            for i in range(1, 6)))
    (tmp / "tasks").mkdir()
    (tmp / "tasks" / f"{task}.yaml").write_text(TASK.format(name=task, data=data, metric=metric,
                                                            aggregation=aggregation))
    (tmp / "run_lm_eval.py").write_text(RUN_LM_EVAL)
    done = subprocess.run([sys.executable, "run_lm_eval.py", "run", "--model", "fixed", "--model_args",
                           f"pretrained={model},outputs={':'.join(OUTPUTS)}", "--tasks", task, "--include_path",
                           "tasks", "--output_path", "out", "--log_samples"], capture_output=True, text=True,
                          timeout=300, cwd=tmp, env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "out"


@pytest.fixture(scope="module")
def lm_eval_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One lm-eval run of the gsm8k-named task for the tests that only read it."""
    return _lm_eval_output(tmp_path_factory.mktemp("lm-eval"))


def _reported(out: Path, key: str) -> float:
    [results] = out.rglob("results_*.json")
    return float(json.loads(results.read_text())["results"]["gsm8k"][key])


def test_an_lm_eval_output_is_one_run_scored_as_lm_eval_scored_it(admin: Admin, lm_eval_out: Path) -> None:
    out = lm_eval_out
    model = f"test-{uuid.uuid4().hex[:8]}/lm-eval"
    result = bench("push", str(out), "--model", model, "--base-url", admin.base_url,
                   "--api-key", admin.account("operator").key)
    assert result.exit_code == 0, result.output
    run = _run_of(admin.base_url, model)
    assert run["benchmark"] == "gsm8k"
    assert abs(run["score"] - _reported(out, "exact_match,none")) <= 1e-9
    assert run["score"] == pytest.approx(0.6)
    # Each document is one task with one attempt: lm-eval scores a document once per filter.
    assert (run["nTasks"], run["nTrialsTotal"]) == (5, 5)
    assert sorted(trial["taskId"] for trial in run["trials"]) == ["0", "1", "2", "3", "4"]
    assert run["source"] == {"format": "lm-eval", "tool": "lm_eval", "version": run["harness"]["version"]}
    assert run["harness"]["name"] == "lm_eval" and run["harness"]["version"].startswith("0.4.")
    [results] = out.rglob("results_*.json")
    # The file carries no dataset revision; the hash lm-eval made of the documents stands for it.
    assert run["dataset"]["revision"] == json.loads(results.read_text())["task_hashes"]["gsm8k"]


def test_the_results_file_alone_reads_the_same_as_its_directory(lm_eval_out: Path) -> None:
    out = lm_eval_out
    [results] = out.rglob("results_*.json")
    by_dir, by_file = bench("push", str(out), "--dry-run"), bench("push", str(results), "--dry-run")
    assert by_dir.exit_code == 0 and by_file.exit_code == 0, by_dir.output + by_file.output
    [payload] = json.loads(by_file.stdout)
    assert json.loads(by_dir.stdout) == [payload]
    assert payload["model"] == "acme/calc-1"
    assert [trial["rewards"]["reward"] for trial in payload["trials"]] == [1.0, 1.0, 0.0, 1.0, 0.0]


def test_a_corpus_level_metric_is_refused(tmp_path: Path) -> None:
    out = _lm_eval_output(tmp_path, metric="bleu", aggregation="bleu")
    result = bench("push", str(out), "--dry-run")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "reports bleu,none (bleu); none is a mean of per-document values" in said


def test_an_output_without_samples_is_refused(lm_eval_out: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(lm_eval_out, tmp_path / "out"))
    for samples in out.rglob("samples_*.jsonl"):
        samples.unlink()
    result = bench("push", str(out), "--dry-run")
    assert result.exit_code == 1
    assert "run lm-eval with --log_samples" in " ".join(result.output.split())


def test_a_results_file_its_samples_do_not_average_to_is_refused(lm_eval_out: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(lm_eval_out, tmp_path / "out"))
    [results] = out.rglob("results_*.json")
    data = json.loads(results.read_text())
    data["results"]["gsm8k"]["exact_match,none"] = 0.8
    results.write_text(json.dumps(data))
    result = bench("push", str(out), "--dry-run")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "its 5 attempts average 0.6, but the harness reported exact_match,none = 0.8" in said


def test_an_unknown_lm_eval_task_is_refused_with_the_known_names(tmp_path: Path) -> None:
    out = _lm_eval_output(tmp_path, task="my_private_sums")
    result = bench("push", str(out), "--dry-run")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "'my_private_sums' is no benchmark of the registry" in said and "gsm8k" in said


def test_every_eval_ever_records_of_the_lm_eval_output_count_the_same(admin: Admin, lm_eval_out: Path,
                                                                       tmp_path: Path) -> None:
    """The records Every Eval Ever's own lm-eval converter makes of that output, checked by its own
    validator, pushed from the 3.12 environment that has it."""
    if not EEE_PYTHON.exists():
        pytest.skip("Every Eval Ever needs Python 3.12: scripts/import-deps.sh makes .venv-eee")
    out = lm_eval_out
    _, run = convert_and_push_eee("lm_eval", out, tmp_path, admin, "lm-eval-eee", "--include_samples")
    assert abs(run["score"] - _reported(out, "exact_match,none")) <= 1e-9
    assert (run["benchmark"], run["nTasks"], run["nTrialsTotal"]) == ("gsm8k", 5, 5)
    assert run["source"] == {"format": "every-eval-ever", "tool": "lm_eval", "version": "0.3.0"}


# The fields of an `.eval_results/*.yaml` entry as Hugging Face's "Evaluation Results" page gives them
# (docs/bench.md cites it): dataset.id and dataset.task_id and value required, the others optional.
HF_FIELDS = {"dataset", "value", "verifyToken", "date", "source", "notes"}
HF_DATASET_FIELDS = {"id", "task_id", "revision"}
HF_SOURCE_FIELDS = {"url", "name", "user"}


def test_the_run_exports_as_hugging_face_eval_results_and_shows_its_tasks(admin: Admin, lm_eval_out: Path,
                                                                          tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    model = f"test-{uuid.uuid4().hex[:8]}/hf"
    pushed = bench("push", str(lm_eval_out), "--model", model, "--base-url", admin.base_url,
                   "--api-key", admin.account("operator").key)
    assert pushed.exit_code == 0, pushed.output
    run = _run_of(admin.base_url, model)
    result = bench("export", "--format", "hf-eval-results", model, "--out", str(tmp_path), "--base-url", admin.base_url)
    assert result.exit_code == 0, result.output
    assert [path.name for path in (tmp_path / ".eval_results").iterdir()] == ["gsm8k.yaml"]
    [entry] = yaml.safe_load((tmp_path / ".eval_results" / "gsm8k.yaml").read_text())
    assert set(entry) <= HF_FIELDS and set(entry["dataset"]) <= HF_DATASET_FIELDS
    assert set(entry["source"]) <= HF_SOURCE_FIELDS
    # The registry's Hugging Face dataset and config; lm-eval's document hash is no dataset commit.
    assert entry["dataset"] == {"id": "openai/gsm8k", "task_id": "main"}
    assert abs(entry["value"] - 100 * _reported(lm_eval_out, "exact_match,none")) <= 1e-9
    assert str(entry["date"]) == run["createdAt"][:10]
    assert entry["source"]["url"].endswith(f"/benchhub/runs/{run['id']}")
    assert entry["source"]["name"] == f"bountyboard run {run['id']}"
    # The HTTP form is the same file.
    answer = httpx.get(f"{admin.base_url}/v1/bench/runs/{run['id']}", params={"format": "hf-eval-results"})
    assert answer.headers["content-type"].startswith("application/yaml")
    assert answer.text == (tmp_path / ".eval_results" / "gsm8k.yaml").read_text()
    # The source is the run's page: each document a task with its outcome.
    page = httpx.get(f"{admin.base_url}/benchhub/runs/{run['id']}")
    assert page.status_code == 200
    for task, reward in zip("01234", ["1", "1", "0", "1", "0"], strict=True):
        assert re.search(rf'<tr data-task="{task}">.*?data-reward="{reward}.0"', page.text, re.S), task
    assert 'data-source="lm-eval"' in page.text


def test_a_benchmark_without_a_hugging_face_dataset_is_not_exported(admin: Admin, tmp_path: Path) -> None:
    model = f"test-{uuid.uuid4().hex[:8]}/native"
    body = {"benchmark": "terminal-bench", "model": model, "agent": {"name": "terminus-2", "version": "1"},
            "harness": {"name": "harbor", "version": "0.1"}, "dataset": {"ref": "terminal-bench", "revision": "2.0"},
            "trials": [{"taskId": f"t{i}", "trialName": f"t{i}__1", "rewards": {"reward": float(i % 2)}}
                       for i in range(4)], "bundleSha256": uuid.uuid4().hex * 2}
    uploaded = admin.account("operator").http.post("/v1/runs", json=body)
    assert uploaded.status_code == 200, uploaded.text
    run_id = uploaded.json()["run"]["id"]
    answer = httpx.get(f"{admin.base_url}/v1/bench/runs/{run_id}", params={"format": "hf-eval-results"})
    assert (answer.status_code, answer.json()["code"]) == (422, "no_hf_dataset")
    result = bench("export", "--format", "hf-eval-results", model, "--out", str(tmp_path), "--base-url", admin.base_url)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "skipped terminal-bench" in said and f"no run of {model} can be exported" in said
    assert not (tmp_path / ".eval_results").exists()
