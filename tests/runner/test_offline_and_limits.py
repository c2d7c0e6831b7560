"""A first run without the Hugging Face Hub, a Hub that cannot be reached, a spent upload quota,
upload payloads the hub's schema refuses, and search by whole words.

The Hugging Face Hub cannot be reached from this machine at all: the tests run with
``HF_HUB_OFFLINE=1`` (tests/runner/conftest.py) or point ``HF_ENDPOINT`` at a closed loopback port.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from bountyboard.runner.adapters import PACKAGED_DATASETS as PACKAGED
from tests.conftest import FIXTURES
from tests.runner.conftest import HUB_REGISTRY, bench, read_json
from tests.support.api import Admin
from tests.support.server import LiveServer, database_url, free_port

HARBOR_JOBS = FIXTURES / "harbor" / "jobs"
# The questions' multiplication and division signs, as Python operators.
OPERATORS = str.maketrans({"\u00d7": "*", "\u00f7": "/"})


def test_offline_first_run(admin: Admin, workdir: Path) -> None:
    """The README's first run: the shipped `arithmetic` rows, no Hub access, pushed to the service."""
    pulled = bench("pull", "arithmetic", "--n", "5", "--base-url", admin.base_url)
    assert pulled.exit_code == 0, pulled.output
    assert len(read_json(workdir / "arithmetic" / "manifest.json")["rowIds"]) == 5
    model = f"test-{uuid.uuid4().hex[:8]}/first"
    ran = bench("run", "arithmetic", "-a", "oracle", "-m", model)
    assert ran.exit_code == 0, ran.output
    pushed = bench("push", "--base-url", admin.base_url)
    assert pushed.exit_code == 0, pushed.output
    runs = httpx.get(f"{admin.base_url}/v1/bench/runs", params={"model": model}).json()["data"]
    assert [(run["benchmark"], run["score"], run["nTasks"]) for run in runs] == [("arithmetic", 1.0, 5)]
    assert runs[0]["dataset"]["ref"] == "bountyboard/arithmetic" and runs[0]["submitter"]["kind"] == "anonymous"


def _ways_out(text: str) -> None:
    flat = " ".join(text.split())
    for hint in ("HF_TOKEN", "HF_HUB_OFFLINE=1", "--registry", "bench pull arithmetic"):
        assert hint in flat, (hint, flat)


def test_an_unreachable_hub_fails_fast_with_the_way_out(workdir: Path) -> None:
    # HF_ENDPOINT is read when huggingface_hub is imported, so the command runs in a process of its own.
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        env.pop(name, None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "bountyboard", "bench", "pull", "gsm8k", "--n", "3",
                           "--registry", str(HUB_REGISTRY)], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=120)
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot reach the Hugging Face Hub" in " ".join(done.stderr.split())
    _ways_out(done.stderr)
    # Without the probe, datasets retries for about half a minute.
    assert elapsed < 15, elapsed
    # Offline mode with nothing cached: the same way out.
    offline = bench("pull", "gsm8k", "--n", "3", "--registry", str(HUB_REGISTRY))
    assert offline.exit_code == 1
    _ways_out(offline.stderr)


def test_push_over_the_quota_stops_at_once(tmp_path: Path, workdir: Path) -> None:
    """A hub of its own with one anonymous upload a day: the second job gets 429 and push stops."""
    jobs = workdir / "jobs"
    for job in ("demo-oracle", "demo-nop", "demo-err"):
        shutil.copytree(HARBOR_JOBS / job, jobs / job)
    env: dict[str, str | None] = {"BOUNTYBOARD_RUNS_PER_IP_PER_DAY": "1", "BOUNTYBOARD_REDIS_URL": None}
    with database_url("sqlite", tmp_path) as url, LiveServer(tmp_path, url, env=env) as server:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "bountyboard", "bench", "push", "jobs", "--benchmark",
                               "hello-world", "--base-url", server.base_url], cwd=workdir, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "BOUNTYBOARD_API_KEY": ""})
        elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert elapsed < 15, elapsed
    assert done.stdout.count("uploaded as") == 1
    message = " ".join(done.stderr.split())
    assert "upload quota spent: 1 upload per 24 h reached" in message, message
    assert "it resets in" in message and " UTC" in message and "2 run(s) not uploaded" in message
    assert "Traceback" not in message


def test_a_payload_the_schema_refuses_is_one_clear_line(workdir: Path) -> None:
    job = shutil.copytree(HARBOR_JOBS / "demo-oracle", workdir / "jobs" / "demo-oracle")
    (result_file,) = job.glob("*/result.json")
    result = json.loads(result_file.read_text())
    result["verifier_result"]["rewards"] = {"a key with spaces": 1.0}
    result_file.write_text(json.dumps(result))
    pushed = bench("push", "jobs", "--benchmark", "hello-world", "--dry-run")
    assert pushed.exit_code == 1
    lines = [line for line in pushed.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("demo-oracle: cannot upload: trials.0.rewards"), lines
    assert "errors.pydantic.dev" not in pushed.stderr and "input_value" not in pushed.stderr


def test_search_matches_whole_words(admin: Admin, workdir: Path) -> None:
    for source in (("--registry", str(HUB_REGISTRY)), ("--base-url", admin.base_url)):
        found = bench("search", "swe", *source, "--json")
        assert found.exit_code == 0, found.output
        slugs = [record["slug"] for record in json.loads(found.stdout)]
        # Not the benchmarks that only say "answer".
        assert slugs and all(slug.startswith("swe-bench") for slug in slugs), slugs
    ranked = bench("search", "math", "--registry", str(HUB_REGISTRY), "--json")
    slugs = [record["slug"] for record in json.loads(ranked.stdout)]
    # Whole words first ("math" in the name or tags), then words it starts ("mathematics").
    assert slugs[0] in {"math-500", "gsm8k", "arithmetic"} and "gsm8k" in slugs


def test_the_shipped_rows_are_right() -> None:
    """Every shipped answer is the value of its question."""
    rows = [json.loads(line) for line in (PACKAGED / "arithmetic" / "test.jsonl").read_text().splitlines()]
    assert len(rows) == 40 and len({row["id"] for row in rows}) == 40
    for row in rows:
        question = row["question"].removeprefix("What is ").removesuffix("?")
        expression = question.translate(OPERATORS)
        assert re.fullmatch(r"[\d+\-*/() ]+", expression), row
        assert eval(expression) == int(row["answer"]), row  # digits and operators only, checked above
