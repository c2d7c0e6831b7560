"""Harbor 0.25.0 itself (scripts/harbor.sh installs it) on what the bench workflow writes.

Harbor's own models validate every task ``bench pull`` writes and every job ``bench run`` writes,
and recount our jobs from their trials; ``harbor run`` runs pulled tasks (there is no Docker engine
here, so through the host-process environment ``bountyboard.runner.hostenv:HostEnvironment``) and
``bench push`` of the job Harbor wrote stores Harbor's means on a live hub.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from bountyboard.benchhub.stats import as_harbor_metric
from tests.conftest import FIXTURES
from tests.runner.conftest import HOST_ENVIRONMENT, HUB_REGISTRY, Harbor, Registry, bench, read_json, same_eval_stats
from tests.support.api import Admin

# The command agent on the local GSM8K rows ("What is n + 10n?"): an error when n % 3 == 0, the
# right answer when n % 3 == 1, a wrong one otherwise.
FLAKY = ('read q; n=$(echo "$q" | grep -o "[0-9]*" | head -1); '
         'if [ $((n % 3)) = 0 ]; then exit 2; elif [ $((n % 3)) = 1 ]; then echo $((n * 11)); else echo 0; fi')


def _only_eval(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    (key,) = report["claimed"]
    return report["claimed"][key], report["computed"][key]


def test_harbor_accepts_pulled_tasks_and_our_jobs(harbor: Harbor, registry: Registry, workdir: Path) -> None:
    assert bench("pull", "gsm8k", "--n", "6", "--seed", "3", "--registry", str(registry.index)).exit_code == 0
    digests = harbor.check("tasks", workdir / "gsm8k")[str(workdir / "gsm8k")]
    assert len(digests) == 6
    for args in (("-a", "oracle", "-k", "2", "--job-name", "oracle"),
                 ("-a", "command", "-m", "me/flaky", "--command", FLAKY, "-k", "3", "--job-name", "flaky")):
        result = bench("run", "gsm8k", *args)
        assert result.exit_code == 0, result.output
    jobs = workdir / "jobs"
    report = harbor.check("jobs", jobs / "oracle", jobs / "flaky")
    oracle, harbor_oracle = _only_eval(report[str(jobs / "oracle")])
    same_eval_stats(oracle, harbor_oracle)
    assert (oracle["metrics"], oracle["pass_at_k"]) == ([{"mean": 1.0}], {"2": 1.0})
    flaky, harbor_flaky = _only_eval(report[str(jobs / "flaky")])
    same_eval_stats(flaky, harbor_flaky)
    assert flaky["n_errors"] > 0 and flaky["n_trials"] + flaky["n_errors"] == 18
    # Every trial carries the lock `harbor upload` requires, with Harbor's digest of its task.
    for lock in jobs.glob("*/*/lock.json"):
        task = read_json(lock)["task"]
        assert task["digest"] == f"sha256:{digests[task['name']]['digest']}"
    assert len(read_json(jobs / "flaky" / "lock.json")["trials"]) == 18


def _runs(base_url: str, model: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{base_url}/v1/bench/runs", params={"model": model})
    assert response.status_code == 200, response.text
    runs: list[dict[str, Any]] = response.json()["data"]
    return runs


@pytest.fixture(scope="module")
def harbor_jobs(harbor: Harbor, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Harbor's jobs on pulled tasks, run once for both backends: the shipped `arithmetic` rows,
    oracle with two attempts and nop with three."""
    work = tmp_path_factory.mktemp("harbor-jobs")
    pulled = bench("pull", "arithmetic", "--n", "4", "--seed", "5", "--registry", str(HUB_REGISTRY),
                   "--out", str(work / "arithmetic"))
    assert pulled.exit_code == 0, pulled.output
    harbor.run(work, "-p", "arithmetic", "-a", "oracle", "-k", "2", "--job-name", "h-oracle")
    harbor.run(work, "-p", "arithmetic", "-a", "nop", "-m", "none/nop", "-k", "3", "--job-name", "h-nop")
    harbor.check("jobs", work / "jobs" / "h-oracle", work / "jobs" / "h-nop")
    return work


def test_harbor_runs_pulled_tasks_and_the_hub_stores_its_means(harbor_jobs: Path, admin: Admin) -> None:
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/harbor"
    manifest = read_json(harbor_jobs / "arithmetic" / "manifest.json")
    jobs = harbor_jobs / "jobs"
    for job in ("h-oracle", "h-nop"):
        # No --benchmark: the tasks' manifest names it.
        pushed = bench("push", str(jobs / job), "--model", f"{model}-{job}", "--base-url", admin.base_url,
                       "--api-key", operator.key)
        assert pushed.exit_code == 0, pushed.output
        (run,) = _runs(admin.base_url, f"{model}-{job}")
        (recorded,) = read_json(jobs / job / "result.json")["stats"]["evals"].values()
        assert run["benchmark"] == "arithmetic"
        assert as_harbor_metric(run["metrics"]) == recorded["metrics"][0]
        assert run["passAtK"] == recorded["pass_at_k"]
        n_trials = len(list((jobs / job).glob("*/result.json")))
        assert (run["nTrials"], run["nErrors"]) == (recorded["n_trials"], recorded["n_errors"])
        assert run["nTrialsTotal"] == n_trials
        assert run["dataset"] == {"ref": "bountyboard/arithmetic", "revision": "1.0", "seed": 5,
                                  "rowIds": manifest["rowIds"]}
        assert run["score"] == (1.0 if job == "h-oracle" else 0.0)


def test_a_harbor_reference_is_handed_to_harbor(harbor: Harbor, workdir: Path) -> None:
    """``bench run <name>@<rev>`` through the real harbor: a local Harbor registry (Harbor's own is
    not reachable from here) lists the fixture tasks; environment, attempts, concurrency and the task
    filter are passed on, the job is named after agent, model and time, and push needs no slug
    (what the hub makes of Harbor's jobs is the test above)."""
    tasks = workdir / "tasks"
    shutil.copytree(FIXTURES / "harbor" / "tasks", tasks)
    (workdir / "registry.json").write_text(json.dumps([{
        "name": "demo", "version": "1.0", "description": "fixture tasks",
        "tasks": [{"name": name, "path": str(tasks / name)} for name in ("hello", "coin", "scores")],
    }]))
    env = {"PATH": f"{harbor.venv / 'bin'}:{os.environ['PATH']}", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    model = f"test-{uuid.uuid4().hex[:8]}/m1"
    for reported in (model, f"{model}-other"):
        result = bench("run", "demo@1.0", "--benchmark", "hello-world", "-a", "nop", "-m", reported,
                       "-e", HOST_ENVIRONMENT, "-k", "2", "-n", "2", "-i", "hello", "-i", "coin",
                       "--harbor-registry", str(workdir / "registry.json"), env=env)
        assert result.exit_code == 0, result.output
    # Two models, two jobs (one name each would make Harbor refuse to resume the other's).
    jobs = sorted((workdir / "jobs").iterdir())
    assert [job.name.split("__")[2:] for job in jobs] == [["nop", "m1"], ["nop", "m1-other"]]
    job = jobs[0]
    config = read_json(job / "config.json")
    assert (config["n_attempts"], config["n_concurrent_trials"]) == (2, 2)
    assert config["environment"]["import_path"] == HOST_ENVIRONMENT
    trials = {read_json(path)["task_name"] for path in job.glob("*/result.json")}
    assert trials == {"demo/hello", "demo/coin"} and len(list(job.glob("*/result.json"))) == 4
    pushed = bench("push", str(job), "--dry-run")
    assert pushed.exit_code == 0, pushed.output
    (payload,) = json.loads(pushed.stdout)
    assert (payload["benchmark"], payload["model"], payload["dataset"]) == (
        "hello-world", model, {"ref": "demo", "revision": "1.0"})
    assert len(payload["trials"]) == 4
