"""The agent task list against the floor's ``GET /healthz``, in alternating rounds: to tell small changes apart.

``perf.cycle`` gives the list one run beside everything else; a change of a few microseconds a request is
within the drift of one run. Here each round runs wrk on the floor, on the list, and on the floor again,
and the round's ratio is the list over the mean of its two floors; the rounds' mean is printed last.

    .venv/bin/python -m perf.list_rounds [--backend sqlite|postgresql|both] [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
from tests.support.api import ALL_SCOPES
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

from perf import wrk
from perf.floor import Floor, chosen_backends, print_against_floor
from perf.market_load import SERVER_ENV, _seed


def measure(backend: str, floor: Floor, args: argparse.Namespace) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="list-rounds-") as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=SERVER_ENV) as server:
        admin_key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()

        async def seed() -> list[str]:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
                keys, _ = await _seed(http, admin_key, 1, args.tasks, 1)
                return keys

        reader = {"Authorization": f"Bearer {asyncio.run(seed())[0]}"}
        n, seconds, ratios = args.connections, args.seconds, []
        for index in range(1, args.rounds + 1):
            before = wrk.run(f"{floor.base_url}/healthz", seconds, n, threads=n)
            listed = wrk.run(f"{server.base_url}/v1/agent/tasks?status=published", seconds, n, threads=n,
                             headers=reader)
            after = wrk.run(f"{floor.base_url}/healthz", seconds, n, threads=n)
            ratios.append(listed.requests_per_second / ((before.requests_per_second + after.requests_per_second) / 2))
            yield (f"| {backend} | {index} | {before.requests_per_second:.0f}, {after.requests_per_second:.0f} | "
                   f"{listed.requests_per_second:.0f} | {listed.p99_ms:.1f} | {ratios[-1]:.3f} |")
        yield f"| {backend} | mean |  |  |  | {sum(ratios) / len(ratios):.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=16, help="wrk threads, one connection each")
    parser.add_argument("--tasks", type=int, default=260, help="published tasks in the list")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (make perf installs it: apt-get install -y wrk)")
    print("| backend | round | floor GET /healthz (before, after) | GET /v1/agent/tasks | p99 ms | ratio |")
    print("|---|---|---|---|---|---|")
    print_against_floor(chosen_backends(args.backend), lambda backend, floor: measure(backend, floor, args))


if __name__ == "__main__":
    main()
