"""push: payloads from job directories (this tool's and Harbor's own), and the loop against a live hub."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import httpx

from bountyboard.runner.harbor import JobResult, primary_metric
from tests.conftest import FIXTURES
from tests.runner.conftest import Registry, bench, read_json
from tests.support.api import Admin

HARBOR_JOBS = FIXTURES / "harbor" / "jobs"


def _harbor_recorded(job: str) -> tuple[float, int]:
    """The headline metric and error count Harbor wrote in the job's result.json."""
    (stats,) = JobResult.model_validate(read_json(HARBOR_JOBS / job / "result.json")).stats.evals.values()
    return primary_metric(stats), stats.n_errors


def _dry_run(*args: str) -> list[dict[str, Any]]:
    result = bench("push", *args, "--dry-run")
    assert result.exit_code == 0, result.output
    payloads: list[dict[str, Any]] = json.loads(result.stdout)
    return payloads


def test_harbor_jobs_need_a_benchmark_slug(workdir: Path) -> None:
    result = bench("push", str(HARBOR_JOBS), "--dry-run")
    assert result.exit_code == 1
    assert "pass --benchmark" in " ".join(result.stderr.split())


def test_payloads_of_harbor_jobs_carry_what_harbor_recorded(workdir: Path) -> None:
    payloads = _dry_run(str(HARBOR_JOBS), "--benchmark", "hello-world")
    by_agent = {(p["agent"]["name"], p["model"]): p for p in payloads}
    assert set(by_agent) == {("oracle", "oracle"), ("nop", "anthropic/claude-sonnet-4-5"), ("nop", "nop")}
    for payload in payloads:
        assert payload["harness"] == {"name": "harbor", "version": "0.25.0"}
        body = {key: value for key, value in payload.items() if key != "bundleSha256"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert payload["bundleSha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    multi = by_agent[("nop", "anthropic/claude-sonnet-4-5")]
    assert multi["dataset"] == {"ref": "ds", "revision": None}
    assert sorted(t["trialName"] for t in multi["trials"]) == [
        "hello__3wryFaR", "hello__K8AN9Fd", "multi__2rjSTxy", "multi__43LVxjZ"]
    assert {t["taskId"]: t["rewards"] for t in multi["trials"]}["demo/multi"] == {
        "reward": 0.5, "accuracy": 1.0, "latency_ok": 0.0}
    # The verifier wrote no reward: an error, not a zero.
    (broken,) = by_agent[("nop", "nop")]["trials"]
    assert broken["rewards"] == {}
    assert broken["error"].startswith("RewardFileNotFoundError: No reward file found")
    # Same jobs, same bundles.
    assert _dry_run(str(HARBOR_JOBS), "--benchmark", "hello-world") == payloads


def test_unfinished_trials_are_skipped_and_reported(workdir: Path) -> None:
    job = shutil.copytree(HARBOR_JOBS / "demo-nop", workdir / "jobs" / "demo-nop")
    (job / "multi__Unfinsh").mkdir()
    (job / "multi__Unfinsh" / "config.json").write_text("{}")
    result = bench("push", "jobs", "--benchmark", "hello-world", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "skipped demo-nop/multi__Unfinsh" in result.stderr
    (payload,) = json.loads(result.stdout)
    assert len(payload["trials"]) == 4


def _push(path: str, base_url: str, key: str, *args: str) -> None:
    result = bench("push", path, "--base-url", base_url, "--api-key", key, *args)
    assert result.exit_code == 0, result.output


def _runs(base_url: str, model: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{base_url}/v1/bench/runs", params={"model": model})
    assert response.status_code == 200, response.text
    runs: list[dict[str, Any]] = response.json()["data"]
    return runs


def test_pushed_harbor_jobs_score_as_harbor_recorded(admin: Admin, workdir: Path) -> None:
    operator = admin.account("operator")
    # A model name of this test only: the server is shared by the session.
    model = f"test-{uuid.uuid4().hex[:8]}/harbor-fixture"
    for job in ("demo-oracle", "demo-nop", "demo-err"):
        _push(str(HARBOR_JOBS / job), admin.base_url, operator.key, "--benchmark", "hello-world",
              "--model", f"{model}-{job}")
        (run,) = _runs(admin.base_url, f"{model}-{job}")
        recorded, errors = _harbor_recorded(job)
        assert run["nErrors"] == errors
        if job == "demo-err":
            # Harbor's mean counts the errored trial as 0; the hub leaves it out of the score.
            assert (run["score"], run["nTrials"], recorded) == (None, 1, 0.0)
        else:
            assert run["score"] == recorded
    # Pushing the same jobs again is answered as duplicates, not stored twice.
    again = bench("push", str(HARBOR_JOBS / "demo-nop"), "--base-url", admin.base_url, "--api-key", operator.key,
                  "--benchmark", "hello-world", "--model", f"{model}-demo-nop")
    assert again.exit_code == 0 and "duplicate" in again.stdout
    assert len(_runs(admin.base_url, f"{model}-demo-nop")) == 1


def test_pull_run_push_then_reproduced_shows_the_run(admin: Admin, registry: Registry, workdir: Path) -> None:
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/oracle"
    assert bench("pull", "gsm8k", "--n", "5", "--registry", str(registry.index)).exit_code == 0
    result = bench("run", "gsm8k", "-a", "oracle", "-m", model, "--job-name", "oracle")
    assert result.exit_code == 0, result.output
    result = bench("run", "gsm8k", "-a", "nop", "-m", f"{model}-nop", "--job-name", "nop")
    assert result.exit_code == 0, result.output
    # Address and key from the environment this time, as a user's shell would have them.
    pushed = bench("push", "--claim", "1.0", "--claim-url", "https://example.org/card",
                   env={"BOUNTYBOARD_BASE_URL": admin.base_url, "BOUNTYBOARD_API_KEY": operator.key})
    assert pushed.exit_code == 0, pushed.output
    (run,) = _runs(admin.base_url, model)
    assert run["submitter"] == {"id": operator.id, "kind": "user", "displayName": run["submitter"]["displayName"]}
    assert (run["benchmark"], run["score"], run["nTasks"], run["nErrors"]) == ("gsm8k", 1.0, 5, 0)
    assert run["harness"]["name"] == "bountyboard" and run["agent"]["name"] == "oracle"
    assert run["dataset"] == {"ref": str(registry.math_dir), "revision": "main"}
    (nop,) = _runs(admin.base_url, f"{model}-nop")
    assert (nop["score"], nop["nTasks"], nop["nErrors"]) == (0.0, 5, 0)
    answer = httpx.get(f"{admin.base_url}/v1/bench/reproduced", params={"model": model})
    assert answer.status_code == 200, answer.text
    item = next(entry for entry in answer.json()["data"] if entry["benchmark"] == "gsm8k")
    assert item["runs"] == 1 and item["measured"]["mean"] == 1.0 and item["measured"]["nTasks"] == 5
    assert item["status"] == "reproduced", item
    assert "gsm8k" not in {gap["benchmark"] for gap in answer.json()["gaps"]}


def test_search_and_info_ask_the_hub(admin: Admin, workdir: Path) -> None:
    found = bench("search", "grade school math", "--base-url", admin.base_url, "--json")
    assert found.exit_code == 0, found.output
    assert "gsm8k" in [record["slug"] for record in json.loads(found.stdout)]
    info = bench("info", "terminal-bench", "--base-url", admin.base_url, "--json")
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["harbor"]["adapter"] == {"kind": "harbor_native", "ref": "terminal-bench@2.0"}
    missing = bench("info", "no-such-benchmark", "--base-url", admin.base_url)
    assert missing.exit_code == 1 and "no benchmark 'no-such-benchmark'" in missing.output
    # The static index by URL, as the site publishes it.
    by_url = bench("info", "humaneval", "--registry", f"{admin.base_url}/benchhub/index.json", "--json")
    assert json.loads(by_url.stdout)["harbor"]["adapter"]["kind"] == "external_harness"
