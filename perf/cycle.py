"""The claim + submit cycle with a C client on both sides, against the database's own rate.

Per backend, one ``bountyboard serve`` (one process, fresh database) with ``--tasks`` listed tasks and
two sets of ``--arenas`` arenas, one bot (and one wrk thread with one connection) per ``--bots``:

- the floor's ``GET /healthz`` and ``POST /echo`` under wrk (perf/lua/echo.lua: the submission's body),
  ``--bots`` threads, each run just before and just after the figure it divides (the list, the cycle): its
  row is their mean, and shows both, since this machine's speed drifts from one minute to the next;
- the cycle under wrk (perf/lua/cycle.lua): each bot claims a slot of its next arena and submits to it,
  carrying the claim id from one answer into the next request; cycles/s over echoes/s (a cycle is two
  requests; the echo one);
- the least a claim or a submit does, under wrk (perf/lua/post.lua): a key-checked ``POST`` whose unit of
  work writes one event and commits (the test deployment's ``POST /v1/admin/events``), over echoes/s; half
  its rate is what a cycle of two such requests could reach if its flows cost nothing;
- ``GET /v1/agent/tasks`` alone under wrk, over the floor's ``GET /healthz``; then again while the
  cycle runs on the second set of arenas: its p99;
- the database's own rate: the statements of one claim and one submit, recorded from the service and
  replayed by the bare driver with one connection per bot (perf/statements.py): cycles/s of the
  service over cycles/s of the database;
- the same statements, on the same database, through the service's storage layer in one process (its
  engine, request sessions, unit of work's begin and commit, each statement as the service built it, from
  SQLAlchemy's compiled cache; no ORM loading, no flows, no HTTP: perf/statements.py): which layer the
  service's distance from the database lies in.

Beside each wrk figure, wrk's share of the machine's CPU while it ran (the client is not the bottleneck
while that share is well below the server's), and the server process's share.

    .venv/bin/python -m perf.cycle [--backend sqlite|postgresql|both] [--seconds 10] [--bots 16]
        [--arenas 300] [--tasks 260] [--profile DIR]

``--profile DIR`` records the server with py-spy (in the venv: ``pip install py-spy``) while the list and
the cycle run alone, as collapsed stacks ``DIR/{backend}-list.txt`` and ``DIR/{backend}-cycle.txt``;
``python -m perf.profile_top FILE [--packages]`` sums them, to find where a request's time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.support.api import ALL_SCOPES
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

from perf import profile_top, statements, wrk
from perf.floor import Floor, chosen_backends, print_against_floor
from perf.market_load import SERVER_ENV, _seed

FLOOR_GET = "floor GET /healthz"
FLOOR_ECHO = "floor POST /echo"
THROUGH_STORAGE = "the same statements through the service's storage layer"
ONE_EVENT = "one event in a unit of work (POST /v1/admin/events)"


@dataclass
class Row:
    scenario: str
    rate: float
    p99_ms: float | None
    against: str | None
    client_cpu: str
    server_cpu: str = ""
    note: str = ""  # shown after the scenario's name


class CpuTime:
    """A process's CPU seconds (user + system) from /proc, so its share over a run can be shown."""

    def __init__(self, pid: int) -> None:
        self.path = Path(f"/proc/{pid}/stat")

    def seconds(self) -> float:
        fields = self.path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _share(cpu_seconds: float, wall: float) -> str:
    return f"{cpu_seconds / (wall * (os.cpu_count() or 1)):.0%}"


def _cycles(run: wrk.WrkRun) -> int:
    """The bots' completed cycles from cycle.lua's report; a refused request or a bot out of arenas fails."""
    lines = [line for line in run.output.splitlines() if line.startswith("bot ")]
    bots = [dict(part.split("=", 1) for part in line.split()[1:4]) for line in lines]
    trouble = [line for line, bot in zip(lines, bots, strict=True) if bot["errors"] != "0" or bot["exhausted"] != "0"]
    if not bots or trouble:
        raise RuntimeError("the cycle had refusals or ran out of arenas (raise --arenas):\n" + "\n".join(trouble))
    return sum(int(bot["cycles"]) for bot in bots)


def _plan(directory: Path, keys: list[str], arenas: list[str]) -> Path:
    plan = directory / f"plan-{arenas[0]}.txt"
    plan.write_text("".join(f"{key} {' '.join(arenas)}\n" for key in keys))
    return plan


def measure(backend: str, floor: Floor, args: argparse.Namespace) -> Iterator[str]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="cycle-") as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=SERVER_ENV) as server:
        admin_key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()

        async def seed() -> tuple[list[str], list[str]]:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
                # Two sets of bots as of arenas: wrk stops a bot between its claim and its submit, and the
                # claim it holds would refuse that bot's next claim (one active claim per bot).
                return await _seed(http, admin_key, 2 * args.bots, args.tasks, 2 * args.arenas)

        keys, arenas = asyncio.run(seed())
        server_pid = server.process.pid if server.process else os.getpid()
        server_cpu = CpuTime(server_pid)
        n, seconds = args.bots, args.seconds
        reader = {"Authorization": f"Bearer {keys[0]}"}
        list_url = f"{server.base_url}/v1/agent/tasks?status=published"

        def floor_around(name: str, path: str, script: str | None, *measured: Callable[[], Row]) -> None:
            """The floor's ``path`` just before and just after the ``measured``: its row is their mean, so a
            machine whose speed drifts moves the floor with the figures it divides; the two show how far it
            drifted."""
            first = wrk.run(f"{floor.base_url}{path}", seconds, n, threads=n, script=script)
            measured_rows = [measure_row() for measure_row in measured]
            last = wrk.run(f"{floor.base_url}{path}", seconds, n, threads=n, script=script)
            rows.append(Row(name, (first.requests_per_second + last.requests_per_second) / 2,
                            max(first.p99_ms, last.p99_ms), None,
                            _share(first.cpu_seconds + last.cpu_seconds, first.seconds + last.seconds),
                            note=f"({first.requests_per_second:.0f} before, {last.requests_per_second:.0f} after)"))
            rows.extend(measured_rows)

        def list_alone() -> Row:
            before = server_cpu.seconds()
            with profile_top.recording(server_pid, args.profile, f"{backend}-list"):
                listed = wrk.run(list_url, seconds, n, threads=n, headers=reader)
            return Row("GET /v1/agent/tasks", listed.requests_per_second, listed.p99_ms, FLOOR_GET,
                       _share(listed.cpu_seconds, listed.seconds),
                       _share(server_cpu.seconds() - before, listed.seconds))

        def cycle_alone() -> Row:
            before = server_cpu.seconds()
            with profile_top.recording(server_pid, args.profile, f"{backend}-cycle"):
                cycle = wrk.run(server.base_url, seconds, n, threads=n, script="cycle.lua", script_counts_answers=True,
                                env={"CYCLE_PLAN": str(_plan(Path(tmp), keys[:n], arenas[:args.arenas]))})
            return Row("claim + submit (cycles)", _cycles(cycle) / cycle.seconds, cycle.p99_ms, FLOOR_ECHO,
                       _share(cycle.cpu_seconds, cycle.seconds),
                       _share(server_cpu.seconds() - before, cycle.seconds))

        def one_event_alone() -> Row:
            before = server_cpu.seconds()
            body = '{"type": "task.published", "count": 1, "data": {}}'
            written = wrk.run(f"{server.base_url}/v1/admin/events", seconds, n, threads=n, script="post.lua",
                              headers={"Authorization": f"Bearer {admin_key}"}, env={"POST_BODY": body})
            return Row(ONE_EVENT, written.requests_per_second, written.p99_ms, FLOOR_ECHO,
                       _share(written.cpu_seconds, written.seconds),
                       _share(server_cpu.seconds() - before, written.seconds))

        floor_around(FLOOR_GET, "/healthz", None, list_alone)
        floor_around(FLOOR_ECHO, "/echo", "echo.lua", cycle_alone, one_event_alone)
        beside: list[wrk.WrkRun] = []
        poller = threading.Thread(target=lambda: beside.append(
            wrk.run(list_url, seconds, args.list_connections, headers=reader)))
        poller.start()
        second = wrk.run(server.base_url, seconds, n, threads=n, script="cycle.lua", script_counts_answers=True,
                         env={"CYCLE_PLAN": str(_plan(Path(tmp), keys[n:], arenas[args.arenas:]))})
        poller.join()
        rows.append(Row("claim + submit beside the list", _cycles(second) / second.seconds, None, FLOOR_ECHO,
                        _share(second.cpu_seconds, second.seconds)))
        rows.append(Row("GET /v1/agent/tasks under claim + submit", beside[0].requests_per_second, beside[0].p99_ms,
                        FLOOR_GET, _share(beside[0].cpu_seconds, beside[0].seconds)))
    with tempfile.TemporaryDirectory(prefix="cycle-db-") as tmp, database_url(backend, Path(tmp)) as url:
        recording, bots, replay_arenas = statements.record_cycle(url, Path(tmp), args.bots, args.replay_arenas)
        bare = statements.replay(url, recording, bots, replay_arenas, seconds)
        rows.append(Row("the database alone: claim + submit statements, bare driver", bare.rate, None, None,
                        _share(bare.client_cpu_seconds, bare.seconds)))
        storage = statements.replay_through_storage(url, Path(tmp), recording, bots, replay_arenas, seconds)
        rows.append(Row(THROUGH_STORAGE, storage.rate, None, None,
                        _share(storage.client_cpu_seconds, storage.seconds)))
    floors = {row.scenario: row.rate for row in rows if row.scenario.startswith("floor")}
    for row in rows:
        ratio = f"{row.rate / floors[row.against]:.3f} of {row.against}" if row.against else ""
        if row.scenario.startswith("claim + submit"):
            ratio += (f"; {row.rate / bare.rate:.2f} of the database alone, "
                      f"{row.rate / storage.rate:.2f} of the storage layer")
        elif row.scenario == ONE_EVENT:
            ratio += f"; a cycle of two: {row.rate / 2 / floors[FLOOR_ECHO]:.3f} of echo at most"
        elif row.scenario == THROUGH_STORAGE:
            ratio = f"{row.rate / bare.rate:.2f} of the database alone"
        p99 = f"{row.p99_ms:.1f}" if row.p99_ms is not None else ""
        name = f"{row.scenario} {row.note}" if row.note else row.scenario
        yield (f"| {backend} | {name} | {row.rate:.0f} | {p99} | {ratio} | {row.client_cpu} | "
               f"{row.server_cpu} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each scenario")
    parser.add_argument("--bots", type=int, default=16, help="bots: wrk threads and connections, replay connections")
    parser.add_argument("--arenas", type=int, default=300, help="arenas each bot may walk, per cycle run")
    parser.add_argument("--replay-arenas", type=int, default=600, help="arenas per bot in the database's replay")
    parser.add_argument("--list-connections", type=int, default=4, help="list pollers beside the cycle")
    parser.add_argument("--tasks", type=int, default=260, help="published tasks in the list")
    parser.add_argument("--profile", type=Path, help="record the server with py-spy into this folder")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (make perf installs it: apt-get install -y wrk)")
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; wrk with {args.bots} threads of one "
          f"connection each; {args.seconds:.0f} s per scenario")
    print("| backend | scenario | per second | p99 ms | ratio | wrk (client) CPU | server CPU |")
    print("|---|---|---|---|---|---|---|")
    print_against_floor(chosen_backends(args.backend), lambda backend, floor: measure(backend, floor, args))


if __name__ == "__main__":
    main()
