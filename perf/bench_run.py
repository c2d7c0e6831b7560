"""``bench run`` overhead per trial: trials per second with the oracle agent at concurrency 1 and 8.

Pulls ``--rows`` rows of a local numeric dataset (the same load_dataset path as a hub dataset) and
runs them with the oracle (one ``bash solve.sh`` per trial, as Harbor's oracle does) and with the
nop agent (no subprocess: what is left is this tool's own bookkeeping: the trial directory, the
verifier, result.json and the job result rewritten after every trial).

    .venv/bin/python -m perf.bench_run [--rows 200] [--attempts 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from bountyboard.runner.adapters import pull_rows
from bountyboard.runner.agents import AgentSpec
from bountyboard.runner.jobs import JobRunner, RunOptions
from bountyboard.runner.registry import Benchmark


def _tasks(root: Path, rows: int) -> Path:
    data = root / "data"
    data.mkdir()
    (data / "test.jsonl").write_text("".join(
        json.dumps({"id": f"r{i}", "question": f"What is {i} + 1?", "answer": f"#### {i + 1}"}) + "\n"
        for i in range(rows)))
    record = {"slug": "perf-sums", "name": "perf sums", "harbor": {"adapter": {
        "kind": "hf_rows", "dataset": str(data), "config": None, "split": "test", "revision": "main",
        "fields": {"id": "id", "input": "question", "target": "answer"},
        "verifier": {"kind": "numeric", "targetPattern": "####\\s*(.+)$"}}}}
    tasks = root / "perf-sums"
    pull_rows(Benchmark.from_record(record), tasks, n=rows, seed=0)
    return tasks


def _measure(tasks: Path, jobs: Path, agent: str, concurrency: int, attempts: int) -> tuple[int, float]:
    runner = JobRunner(RunOptions(tasks_dir=tasks, agent=AgentSpec(agent, model="perf/model"), attempts=attempts,
                                  concurrency=concurrency, jobs_dir=jobs, job_name=f"{agent}-c{concurrency}"))
    started = time.perf_counter()
    trials = asyncio.run(runner.run())
    elapsed = time.perf_counter() - started
    expected = {"reward": 1.0 if agent == "oracle" else 0.0}
    assert all(trial.verifier_result is not None and trial.verifier_result.rewards == expected for trial in trials)
    return len(trials), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--attempts", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-run-perf-") as tmp:
        root = Path(tmp)
        os.environ.setdefault("HF_DATASETS_CACHE", str(root / "hf-cache"))
        tasks = _tasks(root, args.rows)
        print("| agent | concurrency | trials | seconds | trials/s | ms per trial |")
        print("|---|---|---|---|---|---|")
        for agent in ("oracle", "nop"):
            for concurrency in (1, 8):
                n, elapsed = _measure(tasks, root / "jobs", agent, concurrency, args.attempts)
                print(f"| {agent} | {concurrency} | {n} | {elapsed:.2f} | {n / elapsed:.0f} | "
                      f"{1000 * elapsed / n:.1f} |")


if __name__ == "__main__":
    main()
