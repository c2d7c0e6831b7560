"""Fixtures of the bench workflow tests: local datasets, a registry index pointing at them, the CLI.

The Hugging Face hub cannot be reached here, so every dataset is a directory made by the test
and read through the same ``datasets.load_dataset`` call a hub dataset goes through (a local
directory with a README declaring its configs, as on the hub). The records are the hub's own
(src/bountyboard/benchhub/data/registry.json) with ``dataset`` pointed at those directories.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Before `datasets` is imported anywhere: no network, and a cache of this test session only.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_CACHE", tempfile.mkdtemp(prefix="bb-hf-cache-"))

import pytest
from typer.testing import CliRunner, Result

from bountyboard.cli.main import app
from tests.conftest import REPO_ROOT

HUB_REGISTRY = REPO_ROOT / "src" / "bountyboard" / "benchhub" / "data" / "registry.json"
N_MATH_ROWS = 12
N_ARC_ROWS = 8


def hub_record(slug: str) -> dict[str, Any]:
    records = json.loads(HUB_REGISTRY.read_text())["benchmarks"]
    return next(record for record in records if record["slug"] == slug)


def _dataset_dir(root: Path, config: str, filename: str, rows: list[dict[str, Any]]) -> Path:
    import datasets

    (root / config).mkdir(parents=True)
    if filename.endswith(".parquet"):
        datasets.Dataset.from_list(rows).to_parquet(str(root / config / filename))
    else:
        (root / config / filename).write_text("".join(json.dumps(row) + "\n" for row in rows))
    (root / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n    path: {config}/{filename}\n---\n"
    )
    return root


def math_rows() -> list[dict[str, Any]]:
    # GSM8K's layout: the answer is the number after "####" in a worked solution.
    return [{"question": f"What is {i} + {i * 10}?", "answer": f"{i} + {i * 10} = {i * 11}\n#### {i * 11:,}"}
            for i in range(1, N_MATH_ROWS + 1)]


def arc_rows() -> list[dict[str, Any]]:
    # ARC's layout: nested choices with labels; some rows use digits as labels, as ARC does.
    rows = []
    for i in range(N_ARC_ROWS):
        labels = ["1", "2", "3", "4"] if i % 3 == 0 else ["A", "B", "C", "D"]
        texts = [f"option {i}-{k}" for k in range(4)]
        rows.append({"id": f"Mercury_{1000 + i}", "question": f"Which option is right for question {i}?",
                     "choices": {"text": texts, "label": labels}, "answerKey": labels[i % 4]})
    return rows


@dataclass
class Registry:
    index: Path
    math_dir: Path
    arc_dir: Path


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    """An index.json with gsm8k and arc-challenge (local rows) and the hub's harbor_native and
    external_harness records unchanged."""
    math_dir = _dataset_dir(tmp_path / "data" / "gsm8k", "main", "test.jsonl", math_rows())
    arc_dir = _dataset_dir(tmp_path / "data" / "arc", "ARC-Challenge", "test.parquet", arc_rows())
    gsm8k = hub_record("gsm8k")
    gsm8k["harbor"]["adapter"].update(dataset=str(math_dir), revision="main")
    arc = hub_record("arc-challenge")
    arc["harbor"]["adapter"].update(dataset=str(arc_dir), split="test")
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"schemaVersion": "1.0", "benchmarks": [
        gsm8k, arc, hub_record("terminal-bench"), hub_record("humaneval"),
    ]}))
    return Registry(index, math_dir, arc_dir)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Commands run from here, as a user would in their project directory."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work


def bench(*args: str, env: dict[str, str] | None = None) -> Result:
    """``bountyboard bench ...`` in-process; the result carries output and exit code."""
    return CliRunner().invoke(app, ["bench", *args], env=env, catch_exceptions=False)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


# Harbor itself, in its own Python 3.12 virtualenv (scripts/harbor.sh; `make test` installs it first,
# and the fixture does when a test run starts without it).
HARBOR_VENV = Path(os.environ.get("HARBOR_VENV", REPO_ROOT / ".venv-harbor"))
HARBOR_CHECK = Path(__file__).with_name("harbor_check.py")
HOST_ENVIRONMENT = "bountyboard.runner.hostenv:HostEnvironment"


@dataclass
class Harbor:
    venv: Path

    @property
    def cli(self) -> str:
        return str(self.venv / "bin" / "harbor")

    def check(self, kind: str, *paths: Path) -> dict[str, Any]:
        """Harbor's models on task or job directories (harbor_check.py); fails on any problem found."""
        done = subprocess.run([str(self.venv / "bin" / "python"), str(HARBOR_CHECK), kind, *map(str, paths)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        assert answer["problems"] == [], answer["problems"]
        report: dict[str, Any] = answer["report"]
        return report

    def run(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """``harbor run`` with the host-process environment (no Docker here)."""
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # no network fetch of model prices
        done = subprocess.run([self.cli, "run", "-e", HOST_ENVIRONMENT, "--jobs-dir", "jobs", "-q", *args],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done


@pytest.fixture(scope="session")
def harbor() -> Harbor:
    done = subprocess.run([str(REPO_ROOT / "scripts" / "harbor.sh")], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "HARBOR_VENV": str(HARBOR_VENV)})
    assert done.returncode == 0, f"scripts/harbor.sh failed:\n{done.stdout}{done.stderr}"
    return Harbor(HARBOR_VENV)


def same_eval_stats(ours: dict[str, Any], harbors: dict[str, Any]) -> None:
    """What counts in an eval (reward_stats may list trials in another order): equal exactly."""
    for field in ("n_trials", "n_errors", "metrics", "pass_at_k"):
        assert ours[field] == harbors[field], (field, ours[field], harbors[field])
