"""Marketplace load as ratios against the floor (perf/floor.py) started by this script in the same run.

Per backend (SQLite and/or PostgreSQL) one ``bountyboard serve`` (one process, fresh database) is
seeded with ``--tasks`` published tasks and arenas, then, right after measuring the floor again:

- ``GET /healthz`` and ``GET /v1/agent/tasks?status=published`` under wrk (``--connections``
  connections, ``--seconds`` each), against wrk on the floor's ``GET /healthz``;
- the claim + submit cycle: ``--connections`` bots, each claiming a slot of an arena and submitting
  to it, driven by an asyncio httpx client; against the same client posting the same submission body
  to the floor's ``POST /echo`` (one cycle is two requests; the ratio is cycles/s over echoes/s);
- the task list under wrk (``--list-connections``) while the claim + submit cycle runs: its p99;
- a conditional ``GET /v1/agent/tasks`` (``If-None-Match`` with the list's ETag) under wrk;
- ``GET /v1/agent/tasks/{id}`` under wrk: a GET that reads the database on every request (no answer is
  kept for it), so what a GET's transaction costs shows here (the list is usually answered from its cache).

wrk comes from Debian (``make perf`` installs it). ``--profile DIR`` records py-spy profiles (collapsed
stacks, summarised by ``python -m perf.profile_top``) of the server during the list and the cycle.

    .venv/bin/python -m perf.market_load [--backend sqlite|postgresql|both] [--seconds 10]
        [--connections 16] [--tasks 260] [--profile DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.support.api import ALL_SCOPES
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

from perf import profile_top
from perf import wrk as wrk_runner
from perf.floor import Floor, chosen_backends, print_against_floor

ARENA_SLOTS = 1000
# The per-key limit (6,000 a minute by default) is policy, not cost: raised so that it is checked on
# every request, as in production, without refusing the benchmark's thousands a second.
SERVER_ENV = {"BOUNTYBOARD_LOG_LEVEL": "WARNING", "BOUNTYBOARD_KEY_RATE_LIMIT": "100000000"}
SUBMISSION = {"resultType": "text", "content": "result of the cycle"}


@dataclass
class Figure:
    name: str
    rate: float
    p99_ms: float
    against: str = "GET /healthz"  # the floor's figure this one is a ratio of


def wrk(name: str, url: str, seconds: float, connections: int, headers: dict[str, str] | None = None) -> Figure:
    """wrk's requests/s and p99 for one URL; non-2xx/3xx answers make the run fail."""
    run = wrk_runner.run(url, seconds, connections, headers=headers)
    return Figure(name, run.requests_per_second, run.p99_ms)


def _ok(response: httpx.Response) -> dict[str, object]:
    if response.status_code not in (200, 201):
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.status_code} {response.text}")
    body: dict[str, object] = response.json()
    return body


async def _drive(name: str, concurrency: int, seconds: float, step: Callable[[int, int], Awaitable[bool]],
                 per_step: int = 1) -> Figure:
    """``step(worker, n)`` in a loop on each of ``concurrency`` workers for ``seconds`` (or until it returns
    False); steps per second, against the floor's ``POST /echo``."""
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        n = 0
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            if not await step(index, n):
                return
            latencies.append(time.perf_counter() - started)
            n += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(index) for index in range(concurrency)))
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000 / per_step
    return Figure(name, len(latencies) / (time.perf_counter() - started), p99, "POST /echo")


async def _seed(http: httpx.AsyncClient, admin_key: str, workers: int, tasks: int,
                arenas: int) -> tuple[list[str], list[str]]:
    """A funded publisher with listed tasks and arenas; one bot key per worker. Returns (bot keys, arena ids)."""
    admin = {"Authorization": f"Bearer {admin_key}"}
    email = f"perf-{uuid.uuid4().hex[:8]}@example.com"
    publisher = _ok(await http.post("/v1/admin/users", json={"email": email, "role": "publisher"}, headers=admin))
    key = _ok(await http.post(f"/v1/admin/users/{publisher['id']}/api-keys", headers=admin,
                              json={"kind": "user", "scopes": ["tasks:publish", "profile:read"]}))["key"]
    _ok(await http.post("/v1/admin/credit", json={"email": email, "amount": 10_000_000}, headers=admin))
    as_publisher = {"Authorization": f"Bearer {key}"}

    async def publish(body: dict[str, object]) -> str:
        task = _ok(await http.post("/v1/tasks", json=body, headers=as_publisher))
        _ok(await http.post(f"/v1/tasks/{task['id']}/publish", headers=as_publisher))
        return str(task["id"])

    gate = asyncio.Semaphore(8)

    async def publish_gated(body: dict[str, object]) -> str:
        async with gate:
            return await publish(body)

    await asyncio.gather(*(publish_gated({"module": "fun", "title": f"listed task {index}", "description": "x" * 200,
                                          "bountyAmount": 1}) for index in range(tasks)))
    arena_ids = await asyncio.gather(*(publish_gated({"module": "arena", "title": f"arena {index}", "bountyAmount": 10,
                                                      "maxClaims": ARENA_SLOTS}) for index in range(arenas)))
    operator = _ok(await http.post("/v1/admin/users", headers=admin,
                                   json={"email": f"op-{uuid.uuid4().hex[:8]}@example.com", "role": "operator"}))
    operator_key = _ok(await http.post(f"/v1/admin/users/{operator['id']}/api-keys", headers=admin,
                                       json={"kind": "user", "scopes": ["agent:manage", "tasks:read", "tasks:claim",
                                                                        "claims:submit", "claims:read"]}))["key"]
    as_operator = {"Authorization": f"Bearer {operator_key}"}
    keys = []
    for index in range(workers):
        bot = _ok(await http.post("/v1/agent/bots", json={"name": f"load-{index}"}, headers=as_operator))
        keys.append(str(_ok(await http.post("/v1/profile/api-keys", headers=as_operator, json={
            "kind": "bot", "botId": bot["id"],
            "scopes": ["tasks:read", "tasks:claim", "claims:submit", "claims:read"]}))["key"]))
    return keys, list(arena_ids)


class Run:
    def __init__(self, server: LiveServer, floor: Floor, args: argparse.Namespace) -> None:
        self.server, self.floor, self.args = server, floor, args
        self.figures: dict[str, Figure] = {}

    def wrk(self, key: str, url: str, headers: dict[str, str] | None = None, connections: int | None = None) -> Figure:
        figure = wrk(key, url, self.args.seconds, connections or self.args.connections, headers)
        self.figures[key] = figure
        return figure

    async def cycle(self, http: httpx.AsyncClient, keys: list[str], arenas: list[str]) -> Figure:
        async def step(worker: int, n: int) -> bool:
            if n >= len(arenas):  # the bot has had a slot of every arena: it stops early
                return False
            headers = {"Authorization": f"Bearer {keys[worker]}"}
            claim = _ok(await http.post(f"/v1/agent/tasks/{arenas[n]}/claim", headers=headers))
            _ok(await http.post(f"/v1/agent/claims/{claim['claimId']}/submit", headers=headers, json=SUBMISSION))
            return True

        return await _drive("claim + submit", len(keys), self.args.seconds, step, per_step=2)

    async def measure(self, admin_key: str) -> None:
        args, base = self.args, self.server.base_url
        limits = httpx.Limits(max_connections=args.connections * 2, max_keepalive_connections=args.connections * 2)
        async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as http, \
                httpx.AsyncClient(base_url=self.floor.base_url, limits=limits, timeout=60) as floor_http:
            # A bot does one cycle per arena (it holds one slot of a task); arenas for two cycle runs of
            # up to 8 cycles a second per bot.
            arena_count = 2 * (int(args.seconds * 8) + 10)
            keys, arenas = await _seed(http, admin_key, args.connections, args.tasks, arena_count)
            reader = {"Authorization": f"Bearer {keys[0]}"}
            list_url = f"{base}/v1/agent/tasks?status=published"
            pid = self.server.process.pid if self.server.process else 0

            self.wrk("floor GET /healthz", f"{self.floor.base_url}/healthz")
            self.wrk("GET /healthz", f"{base}/healthz")
            with profile_top.recording(pid, args.profile, f"{self.server.backend}-list"):
                self.wrk("GET /v1/agent/tasks", list_url, reader)
            etag = (await http.get(list_url, headers=reader)).headers.get("etag")
            if etag:
                self.wrk("GET /v1/agent/tasks, not modified", list_url, {**reader, "If-None-Match": etag})
            self.wrk("GET /v1/agent/tasks/{id}", f"{base}/v1/agent/tasks/{arenas[-1]}", reader)

            async def echo(_: int, __: int) -> bool:
                _ok(await floor_http.post("/echo", json=SUBMISSION))
                return True

            self.figures["floor POST /echo"] = await _drive("floor POST /echo", args.connections, args.seconds, echo)
            with profile_top.recording(pid, args.profile, f"{self.server.backend}-cycle"):
                self.figures["claim + submit"] = await self.cycle(http, keys, arenas[: arena_count // 2])
            # The list polled while the cycle runs: wrk in a thread beside the asyncio client.
            listing = asyncio.to_thread(wrk, "list under claim + submit", list_url, args.seconds,
                                        args.list_connections, reader)
            loaded, cycling = await asyncio.gather(listing, self.cycle(http, keys, arenas[arena_count // 2:]))
            self.figures["GET /v1/agent/tasks under claim + submit"] = loaded
            self.figures["claim + submit beside the list"] = cycling

    def report(self) -> list[str]:
        floor = {"GET /healthz": self.figures["floor GET /healthz"].rate,
                 "POST /echo": self.figures["floor POST /echo"].rate}
        return [f"| {self.server.backend} | {key} | {figure.rate:.0f} | {figure.p99_ms:.1f} | "
                f"{figure.rate / floor[figure.against]:.3f} of the floor's {figure.against} |"
                for key, figure in self.figures.items()]


def measure(backend: str, floor: Floor, args: argparse.Namespace) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="market-load-") as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=SERVER_ENV) as server:
        admin_key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        run = Run(server, floor, args)
        asyncio.run(run.measure(admin_key))
        return run.report()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each scenario")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections and cycle bots")
    parser.add_argument("--list-connections", type=int, default=4, help="list pollers beside the cycle")
    parser.add_argument("--tasks", type=int, default=260, help="published tasks in the list")
    parser.add_argument("--profile", type=Path, help="write py-spy profiles of the server here")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (make perf installs it: apt-get install -y wrk)")
    backends = chosen_backends(args.backend)
    print(f"load average {os.getloadavg()[0]:.2f}; wrk -t2 -c{args.connections} -d{args.seconds:.0f}s; "
          f"{args.tasks} published tasks; cycle: {args.connections} bots, asyncio httpx client")
    print("| backend | scenario | per second | p99 ms | ratio |")
    print("|---|---|---|---|---|")
    print_against_floor(backends, lambda backend, floor: measure(backend, floor, args))


if __name__ == "__main__":
    main()
