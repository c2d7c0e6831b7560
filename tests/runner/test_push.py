"""push: payloads from job directories (this tool's and Harbor's own), and the loop against a live hub."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from bountyboard.benchhub.stats import as_harbor_metric
from tests.conftest import FIXTURES
from tests.runner.conftest import Registry, bench, read_json
from tests.support.api import Admin

HARBOR_JOBS = FIXTURES / "harbor" / "jobs"
# The jobs Harbor wrote (README.md there): every one is pushed and compared with Harbor's numbers.
FIXTURE_JOBS = sorted(path.name for path in HARBOR_JOBS.iterdir() if (path / "result.json").is_file())


def _harbor_evals(job: str) -> dict[str, Any]:
    """``stats.evals`` as Harbor wrote it in the job's result.json, by agent name."""
    evals: dict[str, Any] = read_json(HARBOR_JOBS / job / "result.json")["stats"]["evals"]
    return {key.split("__")[0]: value for key, value in evals.items()}


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
    payloads = [payload for job in ("demo-oracle", "demo-nop", "demo-err")
                for payload in _dry_run(str(HARBOR_JOBS / job), "--benchmark", "hello-world")]
    by_agent = {(p["agent"]["name"], p["model"]): p for p in payloads}
    assert set(by_agent) == {("oracle", "oracle"), ("nop", "anthropic/claude-sonnet-4-5"), ("nop", "nop")}
    for payload in payloads:
        assert payload["harness"] == {"name": "harbor", "version": "0.25.0"}
        body = {key: value for key, value in payload.items() if key != "bundleSha256"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert payload["bundleSha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    multi = by_agent[("nop", "anthropic/claude-sonnet-4-5")]
    assert multi["dataset"] == {"ref": "ds"}
    assert sorted(t["trialName"] for t in multi["trials"]) == [
        "hello__3wryFaR", "hello__K8AN9Fd", "multi__2rjSTxy", "multi__43LVxjZ"]
    assert {t["taskId"]: t["rewards"] for t in multi["trials"]}["demo/multi"] == {
        "reward": 0.5, "accuracy": 1.0, "latency_ok": 0.0}
    # The verifier wrote no reward: no rewards and an error (the hub counts it 0 for every key, as Harbor does).
    (broken,) = by_agent[("nop", "nop")]["trials"]
    assert "rewards" not in broken
    assert broken["error"].startswith("RewardFileNotFoundError: No reward file found")
    # Same jobs, same bundles.
    again = {payload["bundleSha256"]: payload for payload in _dry_run(str(HARBOR_JOBS), "--benchmark", "hello-world")}
    assert [again.get(payload["bundleSha256"]) for payload in payloads] == payloads


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


# hello-world's registry metric: the score's key when Harbor's uploader names none (demo-keys).
REGISTRY_KEY = "accuracy"


def harbor_headline(metrics: dict[str, float]) -> float:
    """The score Harbor's uploader reports (``_extract_primary_reward``): the only key (Harbor's
    ``mean``), else ``reward``; with several keys and no ``reward`` it has none, and the registry's
    metric is the score."""
    for key in ("mean", "reward", REGISTRY_KEY):
        if key in metrics:
            return metrics[key]
    raise AssertionError(f"no headline key in {metrics}")


def _runs_by_eval(base_url: str, model: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored runs of one model by (agent, dataset): what names an eval of a job pushed with ``--model``."""
    runs = _runs(base_url, model)
    by_eval = {(run["agent"]["name"], run["dataset"]["ref"]): run for run in runs}
    assert len(by_eval) == len(runs), runs
    return by_eval


@pytest.mark.parametrize("job", FIXTURE_JOBS)
def test_every_harbor_eval_is_one_run_with_harbors_numbers(job: str, admin: Admin, workdir: Path) -> None:
    """Harbor's own result.json is the oracle: each eval of ``stats.evals`` (agent, model, dataset)
    is one stored run with Harbor's score, mean of every key, pass@k, n_trials and n_errors."""
    operator = admin.account("operator")
    # A model name of this test only: the server is shared by the session.
    model = f"test-{uuid.uuid4().hex[:8]}/{job}"
    _push(str(HARBOR_JOBS / job), admin.base_url, operator.key, "--benchmark", "hello-world", "--model", model)
    evals: dict[str, Any] = read_json(HARBOR_JOBS / job / "result.json")["stats"]["evals"]
    # Harbor's key is <agent>__[<model>__]<dataset>.
    harbor = {(key.split("__")[0], key.split("__")[-1]): value for key, value in evals.items()}
    runs = _runs_by_eval(admin.base_url, model)
    assert set(runs) == set(harbor)
    for name, run in runs.items():
        recorded = harbor[name]
        assert as_harbor_metric(run["metrics"]) == recorded["metrics"][0], name
        assert run["score"] == harbor_headline(recorded["metrics"][0]), name
        assert run["passAtK"] == recorded["pass_at_k"], name
        assert (run["nTrials"], run["nErrors"]) == (recorded["n_trials"], recorded["n_errors"]), name
        assert run["nTrialsTotal"] == len([trial for trial in (HARBOR_JOBS / job).glob("*/result.json")
                                           if _eval_of(trial) == name])


def _eval_of(trial_result: Path) -> tuple[str, str]:
    result = read_json(trial_result)
    return result["agent_info"]["name"], result["source"]


def test_pushing_twice_gives_duplicates(admin: Admin, workdir: Path) -> None:
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/twice"
    _push(str(HARBOR_JOBS / "demo-nop"), admin.base_url, operator.key, "--benchmark", "hello-world", "--model", model)
    again = bench("push", str(HARBOR_JOBS / "demo-nop"), "--base-url", admin.base_url, "--api-key", operator.key,
                  "--benchmark", "hello-world", "--model", model)
    assert again.exit_code == 0 and "duplicate" in again.stdout
    assert len(_runs(admin.base_url, model)) == 1


# The defects of one job pushed to the hub, each against Harbor's result.json of that job.


def test_a_job_over_two_datasets_is_one_run_per_dataset(admin: Admin, workdir: Path) -> None:
    """demo-datasets: two agents on ds9 (hello, coin) and ds10 (scores, hello) in one job. Grouped
    by (agent, model) only, ds9's single key and ds10's three were one run with a mean of neither."""
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/datasets"
    _push(str(HARBOR_JOBS / "demo-datasets"), admin.base_url, operator.key, "--benchmark", "hello-world",
          "--model", model)
    runs = _runs_by_eval(admin.base_url, model)
    assert sorted(runs) == [("nop", "ds10"), ("nop", "ds9"), ("oracle", "ds10"), ("oracle", "ds9")]
    assert (runs[("oracle", "ds9")]["score"], runs[("oracle", "ds9")]["nTrials"]) == (0.5, 2)
    assert runs[("oracle", "ds10")]["metrics"] == {"accuracy": 0.5, "f1": 0.25, "reward": 0.5}


def test_n_trials_counts_only_rewarded_trials_as_harbor(admin: Admin, workdir: Path) -> None:
    """demo-attempts: 9 trials, 3 of them errored before the verifier wrote a reward: Harbor's
    n_trials is 6; all 9 count in the mean (5/9)."""
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/attempts"
    _push(str(HARBOR_JOBS / "demo-attempts"), admin.base_url, operator.key, "--benchmark", "hello-world",
          "--model", model)
    (run,) = _runs(admin.base_url, model)
    assert (run["score"], run["nTrials"], run["nErrors"]) == (5 / 9, 6, 3)
    assert run["nTrialsTotal"] == 9


def test_an_empty_reward_is_no_error_and_gives_no_pass_at_k(admin: Admin, workdir: Path) -> None:
    """demo-empty: the `empty` task's verifier writes reward.json = {}. Harbor: 4 trials, 0 errors,
    mean 0.5 (the empty rewards count 0), no pass@k."""
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/empty"
    (payload,) = _dry_run(str(HARBOR_JOBS / "demo-empty"), "--benchmark", "hello-world")
    empty = [trial for trial in payload["trials"] if trial["taskId"] == "demo/empty"]
    assert [(trial["rewards"], trial.get("error")) for trial in empty] == [({}, None), ({}, None)]
    _push(str(HARBOR_JOBS / "demo-empty"), admin.base_url, operator.key, "--benchmark", "hello-world",
          "--model", model)
    (run,) = _runs(admin.base_url, model)
    assert (run["score"], run["nTrials"], run["nErrors"], run["passAtK"]) == (0.5, 4, 0, {})


def test_reward_is_the_score_before_the_registry_key(admin: Admin, workdir: Path) -> None:
    """demo-nop carries `reward`, `accuracy` and `latency_ok`; hello-world's metric is `accuracy`.
    Harbor's uploader reports `reward` (0.75), and so does the hub."""
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/keys-order"
    _push(str(HARBOR_JOBS / "demo-nop"), admin.base_url, operator.key, "--benchmark", "hello-world",
          "--model", model)
    (run,) = _runs(admin.base_url, model)
    assert (run["primaryMetric"], run["score"]) == ("reward", 0.75)
    assert run["metrics"] == {"accuracy": 0.5, "latency_ok": 0.0, "reward": 0.75}


def test_metric_override_picks_the_score_key(admin: Admin, workdir: Path) -> None:
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/keys"
    _push(str(HARBOR_JOBS / "demo-keys"), admin.base_url, operator.key, "--benchmark", "hello-world",
          "--model", model, "--metric", "f1")
    (run,) = _runs(admin.base_url, model)
    assert (run["primaryMetric"], run["score"]) == ("f1", 0.5)
    # A key the trials do not carry is refused by the hub, with one clear line and exit code 1.
    refused = bench("push", str(HARBOR_JOBS / "demo-keys"), "--benchmark", "hello-world", "--model", f"{model}-x",
                    "--metric", "recall", "--base-url", admin.base_url, "--api-key", operator.key)
    assert refused.exit_code == 1
    assert "recall" in refused.stderr and "Traceback" not in refused.output


# The command agent on the local GSM8K rows ("What is n + 10n?"): an error when n % 3 == 0, else right.
SOLVER = 'read q; n=$(echo "$q" | grep -o "[0-9]*" | head -1); [ $((n % 3)) = 0 ] && exit 2; echo $((n * 11))'


def test_pull_run_push_then_reproduced_shows_the_run(admin: Admin, registry: Registry, workdir: Path) -> None:
    """bench run and bench push give the same numbers for one job, errored trials included."""
    operator = admin.account("operator")
    model = f"test-{uuid.uuid4().hex[:8]}/solver"
    assert bench("pull", "gsm8k", "--n", "6", "--seed", "1", "--registry", str(registry.index)).exit_code == 0
    ran = bench("run", "gsm8k", "-a", "command", "-m", model, "--command", SOLVER, "-k", "2", "--job-name", "solver")
    assert ran.exit_code == 0, ran.output
    result = bench("run", "gsm8k", "-a", "nop", "-m", f"{model}-nop", "--job-name", "nop")
    assert result.exit_code == 0, result.output
    # Address and key from the environment this time, as a user's shell would have them.
    pushed = bench("push", "--claim", "1.0", "--claim-url", "https://example.org/card",
                   env={"BOUNTYBOARD_BASE_URL": admin.base_url, "BOUNTYBOARD_API_KEY": operator.key})
    assert pushed.exit_code == 0, pushed.output
    (run,) = _runs(admin.base_url, model)
    assert run["submitter"] == {"id": operator.id, "kind": "user", "displayName": run["submitter"]["displayName"]}
    (ours,) = read_json(workdir / "jobs" / "solver" / "result.json")["stats"]["evals"].values()
    assert 0 < ours["n_errors"] < 12 and run["nErrors"] == ours["n_errors"]
    # nTrials is Harbor's n_trials: the errored trials have no reward; every trial counts in the mean.
    assert (run["benchmark"], run["nTasks"], run["nTrials"], run["nTrialsTotal"]) == ("gsm8k", 6, ours["n_trials"], 12)
    # Errored trials count 0 in both; the number bench run printed is the one the hub stored.
    assert as_harbor_metric(run["metrics"]) == ours["metrics"][0] and run["passAtK"] == ours["pass_at_k"]
    assert run["score"] == 1 - ours["n_errors"] / 12
    assert f"{run['score']:.3f}" in ran.stdout and f"{run['score']:.3f}" in pushed.stdout
    assert run["harness"]["name"] == "bountyboard" and run["agent"]["name"] == "command"
    manifest = read_json(workdir / "gsm8k" / "manifest.json")
    assert run["dataset"] == {"ref": str(registry.math_dir), "revision": "main", "seed": 1,
                              "rowIds": manifest["rowIds"]}
    (nop,) = _runs(admin.base_url, f"{model}-nop")
    assert (nop["score"], nop["nTasks"], nop["nErrors"], nop["calibration"]) == (0.0, 6, 0, True)
    answer = httpx.get(f"{admin.base_url}/v1/bench/reproduced", params={"model": model})
    assert answer.status_code == 200, answer.text
    item = next(entry for entry in answer.json()["data"] if entry["benchmark"] == "gsm8k")
    assert item["runs"] == 1 and item["measured"]["mean"] == run["score"] and item["measured"]["nTasks"] == 6
    # The operator pushed its own claim with its own run: self-reported, so gsm8k stays in gaps[]
    # as a claim for someone else to check, with the command that would.
    assert item["status"] == "self_reported" and item["claimant"] == {"kind": "user", "id": operator.id}, item
    (gap,) = [gap for gap in answer.json()["gaps"] if gap["benchmark"] == "gsm8k"]
    assert gap["status"] == "self_reported" and gap["reason"] == item["reason"] and f"-m {model}" in gap["command"]


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
