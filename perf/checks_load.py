"""The task list's p99 while the server's runner runs 8 sandboxed checks, against the same list idle.

A live server (``bountyboard serve``, its in-process runner at ``check_concurrency`` 8) with
``--tasks`` published tasks; an arena of 8 slots whose checks run a verifier that keeps one CPU busy
for ``--burn`` seconds. The list (``GET /v1/agent/tasks``) is polled by ``--pollers`` clients for
``--seconds``, first idle, then while the 8 check runs of the arena's 8 submissions are running.
Both figures come from the same server in the same run, so a loaded machine moves both alike (it
also squeezes both: on a 2-core machine 8 busy sandboxes leave the server a share of the CPU).

    .venv/bin/python -m perf.checks_load --backend sqlite

Target (issue 26): the p99 with 8 checks running within 2x of idle. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from tests.support.api import ALL_SCOPES, OPERATOR_SCOPES, ROLE_EXTRA
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

from perf import wrk
from perf.floor import chosen_backends

TARGET_RATIO = 2.0
CHECKS_AT_ONCE = 8
SERVER_ENV = {"BOUNTYBOARD_LOG_LEVEL": "WARNING", "BOUNTYBOARD_KEY_RATE_LIMIT": "100000000",
              "BOUNTYBOARD_CHECK_CONCURRENCY": str(CHECKS_AT_ONCE), "BOUNTYBOARD_CHECK_POLL_SECONDS": "0.2"}


def _verifier(burn: float) -> str:
    """Busy for ``burn`` seconds, then right when the content is 42."""
    return (f"#!/bin/bash\nend=$((SECONDS + {burn:.0f}))\nwhile [ $SECONDS -lt $end ]; do :; done\n"
            "if grep -qx 42 /app/submission/content.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n")


def _ok(response: httpx.Response) -> Any:
    if response.status_code not in (200, 201):
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.status_code} {response.text}")
    return response.json()


def _p99(base_url: str, key: str, pollers: int, seconds: float) -> wrk.WrkRun:
    """The task list polled by ``pollers`` wrk connections for ``seconds``."""
    return wrk.run(f"{base_url}/v1/agent/tasks", seconds, pollers, threads=pollers,
                   headers={"Authorization": f"Bearer {key}"})


def _account(admin: httpx.Client, role: str) -> tuple[str, str]:
    email = f"{role}-{uuid.uuid4().hex[:10]}@example.com"
    user = _ok(admin.post("/v1/admin/users", json={"email": email, "role": role}))
    key = _ok(admin.post(f"/v1/admin/users/{user['id']}/api-keys",
                         json={"kind": "user", "scopes": OPERATOR_SCOPES + ROLE_EXTRA[role]}))
    return email, key["key"]


def _running(holders: list[httpx.Client], claims: list[str]) -> int:
    """How many of the claims' checks are running now (each asked by its holder)."""
    return sum(_ok(holder.get(f"/v1/agent/claims/{claim_id}/status"))["checkState"] == "running"
               for holder, claim_id in zip(holders, claims, strict=True))


def measure(backend: str, args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="checks-load-") as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=SERVER_ENV) as server:
        admin_key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        admin = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=120)
        email, publisher_key = _account(admin, "publisher")
        _ok(admin.post("/v1/admin/credit", json={"email": email, "amount": str(args.tasks + 100)}))
        publisher = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {publisher_key}"},
                                 timeout=300)
        for n in range(args.tasks):
            draft = _ok(publisher.post("/v1/tasks", json={"module": "fun", "title": f"task {n}", "bountyAmount": 1}))
            _ok(publisher.post(f"/v1/tasks/{draft['id']}/publish"))
        checks = {"binding": True, "solution": {"resultType": "text", "content": "42"},
                  "verifier": {"files": {"test.sh": _verifier(args.burn)}, "timeoutSec": args.burn + 60}}
        arena = _ok(publisher.post("/v1/tasks", json={
            "module": "arena", "title": "checked arena", "bountyAmount": 10, "maxClaims": CHECKS_AT_ONCE,
            "payoutSplit": [1], "checks": checks}))
        _ok(publisher.post(f"/v1/tasks/{arena['id']}/publish"))  # the self-test: twice the burn

        _, reader_key = _account(admin, "operator")
        idle = _p99(server.base_url, reader_key, args.pollers, args.seconds)

        holders = [httpx.Client(base_url=server.base_url, timeout=60,
                                headers={"Authorization": f"Bearer {_account(admin, 'operator')[1]}"})
                   for _ in range(CHECKS_AT_ONCE)]
        claims = [_ok(h.post(f"/v1/agent/tasks/{arena['id']}/claim"))["claimId"] for h in holders]
        for holder, claim_id in zip(holders, claims, strict=True):
            _ok(holder.post(f"/v1/agent/claims/{claim_id}/submit", json={"resultType": "text", "content": "42"}))
        deadline = time.monotonic() + 30
        while (running := _running(holders, claims)) < CHECKS_AT_ONCE:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {running} of {CHECKS_AT_ONCE} checks running")
            time.sleep(0.2)
        busy = _p99(server.base_url, reader_key, args.pollers, args.seconds)
        still = _running(holders, claims)
        ratio = busy.p99_ms / idle.p99_ms
        verdict = "met" if ratio <= TARGET_RATIO else "not met"
        return (f"| {backend} | {_figure(idle)} | {_figure(busy)}; {still} of {CHECKS_AT_ONCE} checks still running "
                f"at the end | {ratio:.2f} ({verdict}) |")


def _figure(run: wrk.WrkRun) -> str:
    return f"{run.p99_ms:.1f} ms ({run.requests_per_second:.0f}/s, wrk {run.cpu_share:.0%} CPU)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the list is polled, each time")
    parser.add_argument("--pollers", type=int, default=4, help="clients polling the list at once")
    parser.add_argument("--tasks", type=int, default=100, help="published tasks in the list")
    parser.add_argument("--burn", type=float, default=25.0, help="seconds each verifier keeps a CPU busy")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.pollers} wrk connections, "
          f"{args.seconds:.0f} s each; {args.tasks} tasks; {CHECKS_AT_ONCE} checks burning {args.burn:.0f} s")
    print("| backend | list p99 idle | list p99, 8 checks running | ratio (target 2) |")
    print("|---|---|---|---|")
    for backend in chosen_backends(args.backend):
        print(measure(backend, args), flush=True)


if __name__ == "__main__":
    main()
