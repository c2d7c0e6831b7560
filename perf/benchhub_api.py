"""Benchmark hub over HTTP, as ratios: reads that must stay flat in stored runs, and a large upload
against the bare floor app echoing the same body (perf/floor.py, started by this script).

Per backend, on a fresh database: the reads (`/v1/bench/reproduced?model=`, the gsm8k leaderboard,
and both revalidated with If-None-Match) with one stored run of ``--tasks`` tasks, then again after
``--runs`` runs of that model in all (spread over six benchmarks and two agents); then
``POST /v1/runs`` with ``--trials`` trials against ``POST /echo`` of a body of the same size.

    .venv/bin/python -m perf.benchhub_api [--backend sqlite|postgresql|both] [--runs 150] [--tasks 100]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from tests.support.api import ALL_SCOPES
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url, postgres_available

from perf.floor import Floor

BENCHMARKS = ["gsm8k", "mmlu", "arc-challenge", "hellaswag", "math-500", "boolq"]
AGENTS = ["terminus-2", "claude-code"]
MODEL = "vendor/perf-model"


def trials(n: int, seed: int) -> list[dict[str, Any]]:
    return [{"taskId": f"task-{i}", "trialName": f"task-{i}__{seed}", "rewards": {"reward": float((i + seed) % 2)},
             "error": None, "startedAt": "2026-11-01T10:00:00Z", "finishedAt": "2026-11-01T10:00:05Z",
             "tokens": {"input": 100, "output": 20}, "costUsd": 0.001} for i in range(n)]


def payload(benchmark: str, n_trials: int, seed: int, agent: str = AGENTS[0]) -> dict[str, Any]:
    return {"benchmark": benchmark, "model": MODEL, "agent": {"name": agent, "version": "1"},
            "harness": {"name": "bountyboard", "version": "0.1.0"}, "dataset": {"ref": "perf", "revision": "r1"},
            "trials": trials(n_trials, seed), "claim": {"value": 0.5, "sourceUrl": "https://example.org"},
            "bundleSha256": hashlib.sha256(uuid.uuid4().bytes).hexdigest()}


def median_ms(call: Callable[[], httpx.Response], rounds: int, expect: int = 200) -> float:
    """Median milliseconds of ``rounds`` calls, after one warm-up."""
    assert call().status_code == expect
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - start) * 1000)
        assert response.status_code == expect, response.text
    return statistics.median(samples)


def reads(http: httpx.Client, rounds: int) -> dict[str, float]:
    reproduced = ("/v1/bench/reproduced", {"model": MODEL})
    board = ("/v1/bench/benchmarks/gsm8k/leaderboard", {})
    figures = {}
    for name, (url, params) in (("reproduced", reproduced), ("leaderboard", board)):
        figures[name] = median_ms(lambda url=url, params=params: http.get(url, params=params), rounds)
        etag = http.get(url, params=params).headers["etag"]
        figures[f"{name} (304)"] = median_ms(
            lambda url=url, params=params, etag=etag: http.get(url, params=params, headers={"If-None-Match": etag}),
            rounds, 304)
    return figures


def measure(backend: str, floor: Floor, args: argparse.Namespace) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env={"BOUNTYBOARD_RUNS_PER_USER_PER_DAY": "1000000",
                                            "BOUNTYBOARD_LOG_LEVEL": "WARNING"}) as server:
        key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        http = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=300)
        assert http.post("/v1/runs", json=payload("gsm8k", args.tasks, 0)).status_code == 200
        one = reads(http, args.rounds)
        for index in range(1, args.runs):
            body = payload(BENCHMARKS[index % len(BENCHMARKS)], args.tasks, index, AGENTS[index % len(AGENTS)])
            response = http.post("/v1/runs", json=body)
            assert response.status_code == 200, response.text
        many = reads(http, args.rounds)
        for name in one:
            lines.append(f"| {backend} | GET {name}, 1 run -> {args.runs} runs of {args.tasks} tasks | "
                         f"{one[name]:.1f} -> {many[name]:.1f} ms | {many[name] / one[name]:.2f}x |")

        bodies = [json.dumps(payload("gsm8k", args.trials, 10_000 + i)).encode() for i in range(args.upload_rounds + 1)]
        headers = {"Content-Type": "application/json"}
        echo = median_ms(lambda: httpx.post(floor.base_url + "/echo", content=bodies[0], headers=headers,
                                            timeout=300), args.upload_rounds)
        pending = iter(bodies)
        upload = median_ms(lambda: http.post("/v1/runs", content=next(pending), headers=headers),
                           args.upload_rounds)
        lines.append(f"| {backend} | POST /v1/runs, {args.trials} trials ({len(bodies[0]) // 1024} KiB) vs floor "
                     f"POST /echo | {upload:.0f} vs {echo:.0f} ms | {upload / echo:.2f}x |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--trials", type=int, default=10_000, help="trials of the large upload")
    parser.add_argument("--rounds", type=int, default=30, help="timed calls per read")
    parser.add_argument("--upload-rounds", type=int, default=5, help="timed large uploads")
    args = parser.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    if "postgresql" in backends and not postgres_available():
        raise SystemExit("PostgreSQL is not reachable (BOUNTYBOARD_TEST_POSTGRES)")
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| backend | operation | figures (median) | ratio |\n|---|---|---|---|")
    with Floor() as floor:
        for backend in backends:
            for line in measure(backend, floor, args):
                print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
