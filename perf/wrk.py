"""wrk (a C load generator, from Debian) run from the benchmarks, with what it cost itself.

A ratio is only as honest as its client: ``run`` reports wrk's own CPU time beside its rate, so a table
can show that the client was not the bottleneck (its share of the machine's cores while it ran).
Scripts for multi-step flows are under perf/lua/.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

LUA = Path(__file__).parent / "lua"


@dataclass
class WrkRun:
    requests_per_second: float
    p99_ms: float
    seconds: float  # as wrk measured its run
    cpu_seconds: float  # wrk's own user + system time
    output: str

    @property
    def cpu_share(self) -> float:
        """wrk's CPU time over the machine's core-seconds while it ran (1.0 = every core busy with wrk)."""
        return self.cpu_seconds / (self.seconds * (os.cpu_count() or 1))


def _p99(output: str) -> float:
    match = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no latency distribution in wrk's output:\n{output}")
    return float(match.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]


def run(url: str, seconds: float, connections: int, *, threads: int = 2, headers: dict[str, str] | None = None,
        script: str | None = None, env: dict[str, str] | None = None, script_counts_answers: bool = False) -> WrkRun:
    """wrk on ``url``; non-2xx/3xx answers fail the run, unless ``script_counts_answers`` (the script reports
    its own refusals, as cycle.lua does). ``script`` names a file of perf/lua/."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds:.0f}s", "--latency"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    if script:
        command += ["-s", str(LUA / script)]
    process = subprocess.Popen([*command, url], stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    assert process.stdout is not None
    output = process.stdout.read()
    # This child's own usage (another wrk may run beside it, in another thread).
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"wrk exited with {process.returncode}:\n{output}")
    if not script_counts_answers and "Non-2xx or 3xx responses" in output:
        raise RuntimeError(f"{url}: error answers under load:\n{output}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    measured = re.search(r"requests in ([\d.]+)(ms|s|m),", output)
    if rate is None or measured is None:
        raise RuntimeError(f"wrk said nothing measurable:\n{output}")
    seconds_run = float(measured.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[measured.group(2)]
    return WrkRun(float(rate.group(1)), _p99(output), seconds_run, usage.ru_utime + usage.ru_stime, output)
