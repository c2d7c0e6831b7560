"""Run every benchmark under perf/ in turn with its default settings (``make perf``).

Each also runs alone: ``python -m perf.<name> --help``. The figures belong in docs/performance.md.
"""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = ["market_load", "cycle", "list_rounds", "webhook_dispatch", "benchhub_api", "site_pages", "bench_run",
              "agent_loop", "check_sandbox", "login_burst"]


def main() -> int:
    failed = []
    for name in BENCHMARKS:
        print(f"\n=== perf.{name} ===", flush=True)
        if subprocess.call([sys.executable, "-m", f"perf.{name}"]) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed or over budget: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
