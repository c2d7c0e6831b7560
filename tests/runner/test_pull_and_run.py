"""search, info, pull and run, through the CLI, on local datasets (the hub is unreachable here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

from bountyboard.runner.harbor import JobResult, TrialResult, read_job_dir
from tests.runner.conftest import N_ARC_ROWS, Registry, bench, read_json


def _pull(registry: Registry, slug: str, *args: str) -> Path:
    result = bench("pull", slug, "--registry", str(registry.index), *args)
    assert result.exit_code == 0, result.output
    return Path(slug) if "--out" not in args else Path(args[args.index("--out") + 1])


def _run(tasks: Path, agent: str, *args: str, job: str | None = None, env: dict[str, str] | None = None) -> Path:
    job = job or f"{tasks.name}-{agent}"
    result = bench("run", str(tasks), "-a", agent, "--job-name", job, *args, env=env)
    assert result.exit_code == 0, result.output
    return Path("jobs") / job


def _mean(job: Path) -> float:
    evals = JobResult.model_validate(read_json(job / "result.json")).stats.evals
    (stats,) = evals.values()
    return stats.metrics[0]["mean"]


def test_search_and_info_read_a_static_index(registry: Registry, workdir: Path) -> None:
    found = bench("search", "math", "--registry", str(registry.index), "--json")
    assert found.exit_code == 0, found.output
    assert [record["slug"] for record in json.loads(found.stdout)] == ["gsm8k"]
    info = bench("info", "arc-challenge", "--registry", str(registry.index), "--json")
    assert json.loads(info.stdout)["harbor"]["adapter"]["kind"] == "hf_rows"
    missing = bench("info", "no-such-benchmark", "--registry", str(registry.index))
    assert missing.exit_code == 1
    assert "no benchmark 'no-such-benchmark'" in missing.output
    no_split = bench("pull", "gsm8k", "--split", "nope", "--registry", str(registry.index))
    assert no_split.exit_code == 1 and "cannot load" in no_split.output
    assert not Path("gsm8k").exists()


def test_pull_is_deterministic_by_seed_and_writes_harbor_tasks(registry: Registry, workdir: Path) -> None:
    first = _pull(registry, "gsm8k", "--n", "5", "--seed", "3", "--out", "a")
    again = _pull(registry, "gsm8k", "--n", "5", "--seed", "3", "--out", "b")
    other = _pull(registry, "gsm8k", "--n", "5", "--seed", "4", "--out", "c")
    manifest = read_json(first / "manifest.json")
    assert manifest["rowIds"] == read_json(again / "manifest.json")["rowIds"]
    assert manifest["rowIds"] != read_json(other / "manifest.json")["rowIds"]
    assert (manifest["seed"], manifest["n"], manifest["revision"], manifest["split"]) == (3, 5, "main", "test")
    assert manifest["dataset"] == str(registry.math_dir)
    for name in manifest["tasks"]:
        task = first / name
        # Same seed, same files, byte for byte.
        for path in task.rglob("*"):
            if path.is_file():
                assert path.read_bytes() == (again / name / path.relative_to(task)).read_bytes()
        config = tomllib.loads((task / "task.toml").read_text())
        assert config["task"]["name"] == f"gsm8k/{name}"
        assert config["metadata"]["dataset_revision"] == "main"
        assert "What is" in (task / "instruction.md").read_text()
        for required in ("tests/test.sh", "tests/verify.py", "tests/expected.json", "solution/solve.sh",
                         "environment/Dockerfile"):
            assert (task / required).is_file(), required
        assert os.access(task / "tests" / "test.sh", os.X_OK)


def test_task_scripts_score_the_way_harbor_runs_them(registry: Registry, workdir: Path, tmp_path: Path) -> None:
    """solve.sh then test.sh, as Harbor runs them in the container (paths moved with env vars)."""
    tasks = _pull(registry, "arc-challenge", "--n", "3")
    for task in sorted(p for p in tasks.iterdir() if p.is_dir()):
        answer, reward = tmp_path / f"{task.name}.answer", tmp_path / f"{task.name}.reward"
        env = {**os.environ, "ANSWER_FILE": str(answer), "REWARD_FILE": str(reward)}
        subprocess.run(["bash", str(task / "solution" / "solve.sh")], env=env, check=True)
        subprocess.run(["bash", str(task / "tests" / "test.sh")], env=env, check=True, capture_output=True)
        assert reward.read_text().strip() == "1"
        answer.write_text("none of these")
        subprocess.run(["bash", str(task / "tests" / "test.sh")], env=env, check=True, capture_output=True)
        assert reward.read_text().strip() == "0"


def test_oracle_scores_one_and_nop_zero_in_harbor_layout(registry: Registry, workdir: Path) -> None:
    for slug, n in (("gsm8k", 6), ("arc-challenge", N_ARC_ROWS)):
        tasks = _pull(registry, slug, "--n", str(n))
        oracle = _run(tasks, "oracle", "-n", "3")
        nop = _run(tasks, "nop", "-m", "test/none")
        assert _mean(oracle) == 1.0
        assert _mean(nop) == 0.0
        job = read_job_dir(oracle)
        assert job.config["job_name"] == oracle.name and job.tag is not None and job.tag.benchmark == slug
        assert len(job.trials) == n and not job.unfinished
        for trial in job.trials:
            assert (trial.path / "config.json").is_file()
            assert (trial.path / "verifier" / "reward.txt").read_text().strip() == "1"
            assert trial.result is not None and trial.result.verifier_result is not None
            assert trial.result.verifier_result.rewards == {"reward": 1.0}
            TrialResult.model_validate(read_json(trial.path / "result.json"))
        assert JobResult.model_validate(read_json(oracle / "result.json")).finished_at is not None


def test_an_interrupted_job_resumes_without_rerunning_finished_trials(registry: Registry, workdir: Path) -> None:
    tasks = _pull(registry, "gsm8k", "--n", "3")
    job = _run(tasks, "oracle", "-k", "2")
    trials = sorted(p for p in job.iterdir() if p.is_dir())
    assert len(trials) == 6
    # One trial lost its result (killed mid-way), another never started.
    (trials[0] / "result.json").unlink()
    shutil.rmtree(trials[1])
    finished = {p.name: (p / "result.json").read_text() for p in trials[2:]}
    result = bench("run", str(tasks), "-a", "oracle", "-k", "2", "--job-name", job.name)
    assert result.exit_code == 0, result.output
    assert "resuming" in result.output
    after = sorted(p for p in job.iterdir() if p.is_dir())
    assert len(after) == 6
    assert not (job / trials[0].name).exists()
    for name, text in finished.items():
        assert (job / name / "result.json").read_text() == text
    assert JobResult.model_validate(read_json(job / "result.json")).n_total_trials == 6
    assert _mean(job) == 1.0
    # Another agent under the same job name is refused, not mixed in.
    clash = bench("run", str(tasks), "-a", "nop", "--job-name", job.name)
    assert clash.exit_code == 1 and "another job" in clash.output


def test_command_agent_reads_stdin_and_answers_on_stdout(registry: Registry, workdir: Path) -> None:
    tasks = _pull(registry, "gsm8k", "--n", "4")
    solver = "python3 -c \"import re,sys; a,b=map(int,re.findall(r'\\d+',sys.stdin.read())[:2]); print(a+b)\""
    job = _run(tasks, "command", "-m", "local/adder", "--command", solver)
    assert _mean(job) == 1.0
    wrong = _run(tasks, "command", "-m", "local/wrong", "--command", "echo 7", job="wrong")
    assert _mean(wrong) == 0.0
    broken = _run(tasks, "command", "-m", "local/broken", "--command", "echo oops >&2; exit 3",
                  job="broken")
    stats = JobResult.model_validate(read_json(broken / "result.json")).stats
    assert stats.n_errored_trials == 4
    (evals,) = stats.evals.values()
    assert list(evals.exception_stats) == ["NonZeroAgentExitCodeError"]
    assert not list(broken.glob("*/verifier/reward.txt"))


def test_harbor_native_pull_prints_the_command_and_external_harness_exits_3(registry: Registry,
                                                                            workdir: Path) -> None:
    native = bench("pull", "terminal-bench", "--registry", str(registry.index))
    assert native.exit_code == 0
    assert "bench run terminal-bench@2.0 --benchmark terminal-bench" in native.output
    assert not Path("terminal-bench").exists()
    external = bench("pull", "humaneval", "--registry", str(registry.index))
    assert external.exit_code == 3
    assert "evaluate_functional_correctness" in external.output
    assert not Path("humaneval").exists()
