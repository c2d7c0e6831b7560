"""The cost of the checks' sandbox: one verifier trial in bubblewrap against the same trial unsandboxed.

Both sides run ``checks.verifier.run_verifier`` on the same bundle and submission (so laying out the
workspace, reading the reward and the statistics are on both sides); only the runner differs:
``checks.sandbox.Sandbox`` (bubblewrap and prlimit, a uid of its own, every namespace) or the bare
runner below, which starts ``bash tests/test.sh`` as a plain child process, with the sandbox's
mounts stood in for by symbolic links under a scratch root (the test script addresses ``$ROOT/app``
and ``$ROOT/logs``; ``ROOT`` is empty in the sandbox). Never run untrusted code with the bare runner:
it exists for this comparison only. The two sides alternate, so a busy machine slows both alike.

    .venv/bin/python -m perf.check_sandbox --trials 30

Target (issue 26): the sandboxed trial within 3x of the bare one. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bountyboard.checks.sandbox import Limits, Mount, Outcome, Sandbox, SandboxResult
from bountyboard.checks.verifier import Runner, VerifierSpec, run_verifier

TARGET_RATIO = 3.0
# A typical small verifier: read the submission, compare, write the reward.
TEST_SH = """#!/bin/bash
answer=$(cat "$ROOT/app/submission/content.txt")
reward=0
if [ "$answer" = "42" ]; then reward=1; fi
echo "$reward" > "$ROOT/logs/verifier/reward.txt"
grep -c resultType "$ROOT/app/submission/submission.json"
"""


class BareRunner:
    """A trial without any sandbox (for this benchmark only)."""

    async def run(self, command: Sequence[str], *, mounts: Sequence[Mount], cwd: str, limits: Limits
                  ) -> SandboxResult:
        started = time.monotonic()
        root = Path(tempfile.mkdtemp(prefix="bb-bare-"))
        try:
            for mount in sorted(mounts, key=lambda m: m.target.count("/")):
                link = root / mount.target.lstrip("/")
                if link.is_dir() and not link.is_symlink():
                    link.rmdir()  # a mount point left empty for the sandbox
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(mount.source)
            process = await asyncio.create_subprocess_exec(
                *command, cwd=root / cwd.lstrip("/"), env={"PATH": "/usr/bin:/bin", "ROOT": str(root)},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            output, _ = await asyncio.wait_for(process.communicate(), limits.timeout_sec)
            return SandboxResult(Outcome.EXITED, process.returncode, output[: limits.output_bytes],
                                 int((time.monotonic() - started) * 1000))
        finally:
            shutil.rmtree(root, ignore_errors=True)


async def measure(trials: int) -> dict[str, float]:
    spec = VerifierSpec(files={"test.sh": TEST_SH}, timeoutSec=30)
    body = {"resultType": "text", "content": "42", "attachments": []}
    runners: dict[str, Runner] = {"sandboxed": Sandbox(), "bare": BareRunner()}
    times: dict[str, list[float]] = {name: [] for name in runners}
    for index in range(trials + 2):
        for name, runner in runners.items():
            started = time.perf_counter()
            result = await run_verifier(spec, body, sandbox=runner)
            elapsed = (time.perf_counter() - started) * 1000
            if result.status != "passed":
                raise SystemExit(f"{name}: the verifier did not pass: {result.as_json()}")
            if index >= 2:  # the first two warm caches
                times[name].append(elapsed)
    spawn: dict[str, list[float]] = {"sandboxed": [], "bare": []}
    for _ in range(trials):
        started = time.perf_counter()
        await Sandbox().run(["bash", "-c", "true"])
        spawn["sandboxed"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec("bash", "-c", "true")
        await process.wait()
        spawn["bare"].append((time.perf_counter() - started) * 1000)
    return {
        "trial_sandboxed_ms": statistics.median(times["sandboxed"]),
        "trial_bare_ms": statistics.median(times["bare"]),
        "trial_sandboxed_p90_ms": statistics.quantiles(times["sandboxed"], n=10)[-1],
        "trial_bare_p90_ms": statistics.quantiles(times["bare"], n=10)[-1],
        "spawn_sandboxed_ms": statistics.median(spawn["sandboxed"]),
        "spawn_bare_ms": statistics.median(spawn["bare"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    missing = Sandbox().available()
    if missing:
        print(f"{missing}: run `make system-deps`")
        return 1
    print(f"cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.1f}")
    figures = asyncio.run(measure(args.trials))
    ratio = figures["trial_sandboxed_ms"] / figures["trial_bare_ms"]
    spawn_ratio = figures["spawn_sandboxed_ms"] / figures["spawn_bare_ms"]
    print(f"one verifier trial, median of {args.trials}: sandboxed {figures['trial_sandboxed_ms']:.1f} ms "
          f"(p90 {figures['trial_sandboxed_p90_ms']:.1f}), bare {figures['trial_bare_ms']:.1f} ms "
          f"(p90 {figures['trial_bare_p90_ms']:.1f}): {ratio:.2f}x (target {TARGET_RATIO:g}x)")
    print(f"bash -c true: sandboxed {figures['spawn_sandboxed_ms']:.1f} ms, bare {figures['spawn_bare_ms']:.1f} ms: "
          f"{spawn_ratio:.2f}x")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
