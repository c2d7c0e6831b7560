"""Benchmark hub over HTTP, as ratios: reads that must stay flat in stored runs, and a large upload
against the bare floor app echoing the same body (perf/floor.py, started by this script).

Per backend, two servers on fresh databases: one holds one stored run of ``--tasks`` tasks, the other
``--runs`` runs of that model (spread over six benchmarks and two agents). The reads
(`/v1/bench/reproduced?model=`, the gsm8k leaderboard, both also revalidated with If-None-Match) are
timed alternately on the two, so a busy machine slows both alike; then ``POST /v1/runs`` with
``--trials`` trials alternately with the floor's ``POST /echo`` of a body of the same size.

    .venv/bin/python -m perf.benchhub_api [--backend sqlite|postgresql|both] [--runs 150] [--tasks 100]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from tests.support.api import ALL_SCOPES
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

from perf.floor import Floor, chosen_backends, print_against_floor

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


def alternate_ms(calls: list[Callable[[], httpx.Response]], rounds: int, expect: int = 200) -> list[float]:
    """Median milliseconds of each call, the calls taking turns (after one warm-up each)."""
    samples: list[list[float]] = [[] for _ in calls]
    for round_number in range(rounds + 1):
        for call, timings in zip(calls, samples, strict=True):
            start = time.perf_counter()
            response = call()
            elapsed = (time.perf_counter() - start) * 1000
            assert response.status_code == expect, response.text
            if round_number:
                timings.append(elapsed)
    return [statistics.median(timings) for timings in samples]


READS = {"reproduced": ("/v1/bench/reproduced", {"model": MODEL}),
         "leaderboard": ("/v1/bench/benchmarks/gsm8k/leaderboard", {})}


def reads(one: httpx.Client, many: httpx.Client, rounds: int) -> dict[str, tuple[float, float]]:
    figures = {}
    for name, (url, params) in READS.items():
        small, large = alternate_ms([partial(http.get, url, params=params) for http in (one, many)], rounds)
        figures[name] = (small, large)
        tags = [http.get(url, params=params).headers["etag"] for http in (one, many)]
        small, large = alternate_ms(
            [partial(http.get, url, params=params, headers={"If-None-Match": tag})
             for http, tag in zip((one, many), tags, strict=True)], rounds, 304)
        figures[f"{name} (304)"] = (small, large)
    return figures


def hub(stack: contextlib.ExitStack, backend: str) -> httpx.Client:
    data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    url = stack.enter_context(database_url(backend, data_dir))
    server = stack.enter_context(LiveServer(data_dir, url, env={"BOUNTYBOARD_RUNS_PER_USER_PER_DAY": "1000000",
                                                                "BOUNTYBOARD_LOG_LEVEL": "WARNING"}))
    key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
    return stack.enter_context(httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"},
                                            timeout=300))


def upload(http: httpx.Client, body: dict[str, Any]) -> None:
    response = http.post("/v1/runs", json=body)
    assert response.status_code == 200, response.text


def measure(backend: str, floor: Floor, args: argparse.Namespace) -> list[str]:
    lines = []
    with contextlib.ExitStack() as stack:
        one, many = hub(stack, backend), hub(stack, backend)
        upload(one, payload("gsm8k", args.tasks, 0))
        for index in range(args.runs):
            upload(many, payload(BENCHMARKS[index % len(BENCHMARKS)], args.tasks, index, AGENTS[index % len(AGENTS)]))
        for name, (small, large) in reads(one, many, args.rounds).items():
            lines.append(f"| {backend} | GET {name}: 1 run vs {args.runs} runs of {args.tasks} tasks | "
                         f"{small:.1f} vs {large:.1f} ms | {large / small:.2f}x |")

        bodies = iter([json.dumps(payload("gsm8k", args.trials, 10_000 + i)).encode()
                       for i in range(args.upload_rounds + 1)])
        size = len(json.dumps(payload("gsm8k", args.trials, 0)))
        headers = {"Content-Type": "application/json"}
        echo_body = json.dumps(payload("gsm8k", args.trials, 0)).encode()
        echo, stored = alternate_ms([
            lambda: httpx.post(floor.base_url + "/echo", content=echo_body, headers=headers, timeout=300),
            lambda: many.post("/v1/runs", content=next(bodies), headers=headers),
        ], args.upload_rounds)
        lines.append(f"| {backend} | POST /v1/runs, {args.trials} trials ({size // 1024} KiB) vs floor POST /echo | "
                     f"{stored:.0f} vs {echo:.0f} ms | {stored / echo:.2f}x |")
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
    backends = chosen_backends(args.backend)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| backend | operation | figures (median) | ratio |\n|---|---|---|---|")
    print_against_floor(backends, lambda backend, floor: measure(backend, floor, args))


if __name__ == "__main__":
    main()
