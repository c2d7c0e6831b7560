"""bench push of other harnesses' files: a real Inspect AI log (Inspect's own ``mockllm/model`` with
fixed outputs, two epochs) and the Every Eval Ever records its own converter makes of that log, each
pushed to a live hub whose score must equal the harness's reported aggregate.

Inspect comes with the ``inspect`` extra; Every Eval Ever needs Python 3.12 and lives with its
converter in .venv-eee (scripts/import-deps.sh installs both).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO_ROOT
from tests.runner.conftest import bench
from tests.support.api import Admin

EEE_PYTHON = REPO_ROOT / os.environ.get("EEE_VENV", ".venv-eee") / "bin" / "python"
# Five sums, two epochs: the mock model answers 7 of the 10 attempts right.
OUTPUTS = ["2", "4", "7", "8", "11", "2", "5", "6", "8", "10"]
MAKE_LOG = textwrap.dedent("""
    import sys
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import bootstrap_stderr, match
    from inspect_ai.solver import generate

    task_name, outputs, metrics, model_name, out_dir = sys.argv[1], sys.argv[2].split(","), *sys.argv[3:6]

    def output(text):
        # Usage given, so the mock model counts no tokens (tiktoken would download its encoding).
        made = ModelOutput.from_content("mockllm/model", text)
        made.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return made

    samples = [Sample(id=f"q{i}", input=f"What is {i}+{i}?", target=str(2 * i)) for i in range(1, 6)]
    model = get_model("mockllm/model", custom_outputs=[output(text) for text in outputs])
    task = Task(dataset=MemoryDataset(samples, name="tiny-sums"), solver=generate(), scorer=match(), epochs=2,
                name=task_name, metrics=[bootstrap_stderr()] if metrics == "stderr-only" else None)
    [log] = inspect_eval(task, model=model, log_dir=out_dir, log_format=sys.argv[6], display="none", max_samples=1)
    assert log.status == "success", log.error
    if model_name != "-":
        from inspect_ai.log import write_eval_log
        log.eval.model = model_name
        write_eval_log(log, out_dir + "/renamed.eval")
    print(log.location)
""")


def _inspect_log(tmp: Path, *, task: str = "inspect_evals/gsm8k", metrics: str = "default",
                 log_format: str = "eval", python: Path | str = sys.executable, rename: str = "-") -> Path:
    pytest.importorskip("inspect_ai", reason="pip install 'bountyboard[inspect]' (scripts/import-deps.sh)")
    script = tmp / "make_log.py"
    script.write_text(MAKE_LOG)
    done = subprocess.run([str(python), str(script), task, ",".join(OUTPUTS), metrics, rename, str(tmp / "logs"),
                           log_format], capture_output=True, text=True, timeout=300, cwd=tmp,
                          env={**os.environ, "INSPECT_LOG_LEVEL": "warning"})
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "logs" / "renamed.eval" if rename != "-" else Path(done.stdout.strip().splitlines()[-1])


def _reported_accuracy(log: Path) -> float:
    from inspect_ai.log import read_eval_log

    return float(read_eval_log(str(log)).results.scores[0].metrics["accuracy"].value)  # type: ignore[union-attr]


def _run_of(base_url: str, model: str) -> dict[str, Any]:
    listed = httpx.get(f"{base_url}/v1/bench/runs", params={"model": model}).json()["data"]
    assert len(listed) == 1, listed
    detail: dict[str, Any] = httpx.get(f"{base_url}/v1/bench/runs/{listed[0]['id']}").json()
    return detail


def convert_and_push_eee(converter: str, log: Path, cwd: Path, admin: Admin, name: str,
                         *options: str) -> tuple[Path, dict[str, Any]]:
    """Convert ``log`` with Every Eval Ever's own ``converter``, check the record with its validator, push it
    with the bountyboard installed beside it: the record's aggregate file and the hub's run."""
    converted = subprocess.run([str(EEE_PYTHON), "-m", f"every_eval_ever.converters.{converter}", "--log_path",
                                str(log), "--output_dir", "data", "--source_organization_name", "bountyboard-tests",
                                *options], capture_output=True, text=True, timeout=300, cwd=cwd)
    assert converted.returncode == 0, converted.stderr[-3000:]
    [aggregate] = (cwd / "data").rglob("*.json")
    instances = aggregate.with_name(aggregate.stem + "_samples.jsonl")
    checked = subprocess.run([str(EEE_PYTHON), "-m", "every_eval_ever", "validate",
                              str(aggregate.relative_to(cwd)), str(instances.relative_to(cwd))],
                             capture_output=True, text=True, cwd=cwd)
    assert checked.returncode == 0, checked.stdout[-3000:]
    model = f"test-{uuid.uuid4().hex[:8]}/{name}"
    pushed = subprocess.run([str(EEE_PYTHON.parent / "bountyboard"), "bench", "push", str(aggregate), "--model", model,
                             "--base-url", admin.base_url, "--api-key", admin.account("operator").key],
                            capture_output=True, text=True, timeout=120)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    return aggregate, _run_of(admin.base_url, model)


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_an_inspect_log_is_one_run_scored_as_inspect_scored_it(log_format: str, admin: Admin,
                                                                 tmp_path: Path) -> None:
    log = _inspect_log(tmp_path, log_format=log_format)
    model = f"test-{uuid.uuid4().hex[:8]}/mock"
    result = bench("push", str(log), "--model", model, "--base-url", admin.base_url,
                   "--api-key", admin.account("operator").key)
    assert result.exit_code == 0, result.output
    run = _run_of(admin.base_url, model)
    assert run["benchmark"] == "gsm8k"
    assert abs(run["score"] - _reported_accuracy(log)) <= 1e-9
    assert run["score"] == pytest.approx(0.7)
    assert (run["nTasks"], run["nTrialsTotal"]) == (5, 10)
    attempts: dict[str, int] = {}
    for trial in run["trials"]:
        attempts[trial["taskId"]] = attempts.get(trial["taskId"], 0) + 1
    assert attempts == {f"q{i}": 2 for i in range(1, 6)}
    assert run["source"]["format"] == "inspect" and run["source"]["tool"] == "inspect_ai"
    assert run["harness"] == {"name": "inspect_ai", "version": run["source"]["version"]}
    assert run["usage"] == {"inputTokens": 100, "outputTokens": 20, "costUsd": None}


def test_an_unknown_task_is_refused_with_the_known_names(tmp_path: Path) -> None:
    log = _inspect_log(tmp_path, task="my_private_eval")
    result = bench("push", str(log), "--dry-run")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "'my_private_eval' is no benchmark of the registry" in said
    assert "inspect_evals/gsm8k" in said


def test_a_metric_that_is_no_mean_of_samples_is_refused(tmp_path: Path) -> None:
    log = _inspect_log(tmp_path, metrics="stderr-only")
    result = bench("push", str(log), "--dry-run")
    assert result.exit_code == 1
    assert "none is a mean of per-sample values" in " ".join(result.output.split())


def test_a_missing_reader_is_named_with_its_install_line(tmp_path: Path) -> None:
    record = {"schema_version": "0.3.0", "evaluation_results": [], "model_info": {"id": "acme/x"}}
    (tmp_path / "record.json").write_text(json.dumps(record))
    try:
        import every_eval_ever  # noqa: F401
    except ImportError:
        result = bench("push", str(tmp_path / "record.json"), "--dry-run")
        assert result.exit_code == 1
        assert "pip install 'bountyboard[eee]'" in " ".join(result.output.split())
    else:
        pytest.skip("every-eval-ever is installed in this environment")


def test_every_eval_ever_records_of_the_log_count_the_same(admin: Admin, tmp_path: Path) -> None:
    """The records Every Eval Ever's own converter makes of the Inspect log, checked by its own
    validator, pushed from the 3.12 environment that has it."""
    if not EEE_PYTHON.exists():
        pytest.skip("Every Eval Ever needs Python 3.12: scripts/import-deps.sh makes .venv-eee")
    # Its converter names the developer from the model's provider, which mockllm is not.
    log = _inspect_log(tmp_path, python=EEE_PYTHON, rename="openai/calc-1")
    aggregate, run = convert_and_push_eee("inspect", log, tmp_path, admin, "mock-eee")
    reported = json.loads(aggregate.read_text())["evaluation_results"][0]["score_details"]["score"]
    assert abs(run["score"] - reported) <= 1e-9
    assert abs(run["score"] - 0.7) <= 1e-9
    assert (run["benchmark"], run["nTasks"], run["nTrialsTotal"]) == ("gsm8k", 5, 10)
    assert run["source"] == {"format": "every-eval-ever", "tool": "inspect_ai", "version": "0.3.0"}


def test_a_run_exported_in_every_eval_ever_form_passes_its_validator(admin: Admin, tmp_path: Path) -> None:
    if not EEE_PYTHON.exists():
        pytest.skip("Every Eval Ever needs Python 3.12: scripts/import-deps.sh makes .venv-eee")
    log = _inspect_log(tmp_path)
    model = f"test-{uuid.uuid4().hex[:8]}/export"
    result = bench("push", str(log), "--model", model, "--base-url", admin.base_url,
                   "--api-key", admin.account("operator").key)
    assert result.exit_code == 0, result.output
    run = _run_of(admin.base_url, model)
    response = httpx.get(f"{admin.base_url}/v1/bench/runs/{run['id']}", params={"format": "every-eval-ever"})
    assert response.status_code == 200, response.text
    exported = response.json()
    aggregate, instances = tmp_path / exported["aggregatePath"], tmp_path / exported["instancesPath"]
    aggregate.parent.mkdir(parents=True)
    aggregate.write_text(json.dumps(exported["aggregate"]))
    instances.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in exported["instances"]))
    checked = subprocess.run([str(EEE_PYTHON), "-m", "every_eval_ever", "validate", "--format", "json",
                              exported["aggregatePath"], exported["instancesPath"]],
                             capture_output=True, text=True, cwd=tmp_path)
    assert checked.returncode == 0, [e["msg"] for report in json.loads(checked.stdout) for e in report["errors"]]
    assert exported["aggregate"]["evaluation_results"][0]["score_details"]["score"] == run["score"]
    assert len(exported["instances"]) == 10
