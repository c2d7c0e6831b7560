"""Instructions per request, counted by valgrind's callgrind: a figure a machine's drifting speed does not move.

On a machine whose speed drifts, timings cannot tell a change of a few microseconds a request apart: on
2026-11-27 two identical configurations of the cached task list differed by 40 us in the app (medians of 12
alternating rounds of ``perf.cycle_phases``' pieces). Callgrind counts the instructions a process runs: the
same code on the same inputs gives nearly the same count whatever else the machine does (four runs of one
tree: 892.4 to 896.7 million instructions for 300 GETs, 0.5% apart).

Each tree (``--tree``: a ``src`` directory, e.g. of a ``git worktree``; this checkout's by default) runs the
app in process, as ``perf.cycle_phases`` does (httpx's ``ASGITransport``, one client, one bot), under
callgrind with instrumentation off. Once the app is warm it asks to be counted (``callgrind_control -i on``),
runs its requests and exits at once (``os._exit``: no teardown in the figure). The count includes the
in-process client's work, the same for every tree: compare trees, not absolute figures. Instructions are not
time (a cache miss or a system call costs more than one), so a change a count favours is then timed under
wrk (``perf.list_rounds``, ``perf.cycle``).

    .venv/bin/python -m perf.instructions [--backend sqlite|postgresql] [--what list|cycle] [--requests 300]
                                          [--tree SRC ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from tests.support.server import database_url

from perf import statements
from perf.cycle_phases import one_cycle
from perf.floor import chosen_backends
from perf.market_load import _ok, _seed

REPOSITORY = Path(__file__).resolve().parent.parent
LIST_URL = "/v1/agent/tasks?status=published"
WARM = "warm"  # the child's line on stdout once its app is warm


async def _drive(admin_key: str, what: str, requests: int) -> None:
    """In the child: warm the app, say so on stdout, wait for SIGUSR1 (counting is on), run ``requests``."""
    from bountyboard.app import create_app

    app = create_app()
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://perf", timeout=600) as http:
        cycles = requests // 2 if what == "cycle" else 0
        keys, arenas = await _seed(http, admin_key, 1, 0, cycles + 20)
        bot = {"Authorization": f"Bearer {keys[0]}"}

        if what == "cycle":
            for arena in arenas[:20]:  # warm: statements compiled, caches filled
                await one_cycle(http, bot, arena)
        else:
            for _ in range(50):
                _ok(await http.get(LIST_URL, headers=bot))
        counting = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, counting.set)
        print(WARM, flush=True)
        await counting.wait()
        if what == "cycle":
            for arena in arenas[20:20 + cycles]:
                await one_cycle(http, bot, arena)
        else:
            for _ in range(requests):
                _ok(await http.get(LIST_URL, headers=bot))
    sys.stdout.flush()
    os._exit(0)  # counted up to here: no teardown in the figure


def child(backend: str, what: str, requests: int) -> None:
    with tempfile.TemporaryDirectory(prefix="instructions-") as tmp, database_url(backend, Path(tmp)) as url, \
            statements.prepared(url, Path(tmp)) as admin_key:
        asyncio.run(_drive(admin_key, what, requests))


def count(tree: Path, backend: str, what: str, requests: int, workdir: Path) -> int:
    """Instructions of ``requests`` requests of ``what`` served by the app of ``tree`` (its ``src``)."""
    out, log = workdir / "callgrind.out", workdir / "stderr.log"
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{REPOSITORY}", "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
               sys.executable, "-m", "perf.instructions", "--child", "--backend", backend, "--what", what,
               "--requests", str(requests)]
    with log.open("w") as errors, subprocess.Popen(command, env=env, cwd=REPOSITORY, stdout=subprocess.PIPE,
                                                   stderr=errors, text=True) as process:
        assert process.stdout is not None
        if process.stdout.readline().strip() != WARM:
            process.kill()
            raise SystemExit(f"the app of {tree} stopped before it was warm:\n{log.read_text()}")
        # Valgrind runs the program in its own process: the pid is the app's.
        subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
        process.send_signal(signal.SIGUSR1)
        process.communicate()
    summary = next(line for line in out.read_text().splitlines() if line.startswith(("summary:", "totals:")))
    return int(summary.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--what", choices=["list", "cycle"], default="list",
                        help="cached GET /v1/agent/tasks, or claim + submit (two requests a cycle)")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--tree", type=Path, action="append", help="a src directory (default: this checkout's)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.backend, args.what, args.requests)
        return
    chosen_backends(args.backend)
    trees = args.tree or [REPOSITORY / "src"]
    print(f"\n{args.backend}: {args.requests} requests ({args.what}), in process, instructions (callgrind)\n")
    print("| tree | instructions | per request |\n|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="instructions-") as workdir:
        for tree in trees:
            total = count(tree.resolve(), args.backend, args.what, args.requests, Path(workdir))
            print(f"| {tree} | {total:,} | {total / args.requests:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
