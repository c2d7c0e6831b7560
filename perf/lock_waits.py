"""Who waits on whom during a burst of claim + submit cycles on PostgreSQL: ``pg_stat_activity`` sampled.

One ``bountyboard serve`` on a fresh PostgreSQL database, seeded as perf/market_load.py seeds it;
``--connections`` bots then walk claim -> submit over the arenas for ``--seconds`` while a sampler reads
``pg_stat_activity`` of that database every ``--interval`` seconds. Printed: how many backends were seen
active, and every lock wait seen, by wait event and statement. Bots claiming the same arena at once wait
for its row (that is the claim's own lock, by design); no statement writing an event may wait, since
events take no row shared by every writer (events.service: positions from the transaction horizon).
The script fails if one did (a wait for a new page of the events table's file aside: that is no row).

    .venv/bin/python -m perf.lock_waits [--seconds 10] [--connections 16] [--interval 0.005]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg2
from tests.support.api import ALL_SCOPES
from tests.support.db import PAGE_ALLOCATION_WAIT
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url, psycopg_dsn

from perf.market_load import SERVER_ENV, SUBMISSION, _drive, _ok, _seed

_SAMPLE = ("SELECT state, wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) "
           "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
# Statements that write an event or its counter: none of them may wait for a lock.
_EVENT_WRITES = ("insert into events", "event_counter")


class Sampler(threading.Thread):
    def __init__(self, url: str, interval: float) -> None:
        super().__init__(daemon=True)
        self.url, self.interval = url, interval
        self.samples = 0
        self.active: Counter[int] = Counter()  # backends active at once -> samples
        self.waits: Counter[tuple[str, str]] = Counter()  # (wait event, statement) -> samples
        self.stop = threading.Event()

    def run(self) -> None:
        with psycopg2.connect(psycopg_dsn(self.url)) as connection:
            while not self.stop.is_set():
                with connection.cursor() as cursor:
                    cursor.execute(_SAMPLE)
                    rows = cursor.fetchall()
                connection.rollback()  # a new statistics snapshot for the next sample
                self.samples += 1
                self.active[sum(1 for state, *_ in rows if state == "active")] += 1
                for _, kind, event, query in rows:
                    if kind == "Lock":
                        self.waits[(str(event), str(query))] += 1
                time.sleep(self.interval)


async def burst(server: LiveServer, admin_key: str, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=args.connections * 2, max_keepalive_connections=args.connections * 2)
    async with httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=60) as http:
        keys, arenas = await _seed(http, admin_key, args.connections, 0, int(args.seconds * 8) + 10)

        async def step(worker: int, n: int) -> bool:
            if n >= len(arenas):
                return False
            headers = {"Authorization": f"Bearer {keys[worker]}"}
            claim = _ok(await http.post(f"/v1/agent/tasks/{arenas[n]}/claim", headers=headers))
            _ok(await http.post(f"/v1/agent/claims/{claim['claimId']}/submit", headers=headers, json=SUBMISSION))
            return True

        figure = await _drive("claim + submit", args.connections, args.seconds, step, per_step=2)
        print(f"claim + submit: {figure.rate:.0f} cycles/s, p99 {figure.p99_ms:.1f} ms per request")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=16, help="bots cycling at once")
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between samples")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lock-waits-") as tmp, database_url("postgresql", Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=SERVER_ENV) as server:
        admin_key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        sampler = Sampler(url, args.interval)
        sampler.start()
        try:
            asyncio.run(burst(server, admin_key, args))
        finally:
            sampler.stop.set()
            sampler.join()
    print(f"{sampler.samples} samples; backends active at once: "
          + ", ".join(f"{active}: {count}" for active, count in sorted(sampler.active.items())))
    print("| wait event | statement | samples |\n|---|---|---|")
    for (event, query), count in sampler.waits.most_common():
        print(f"| {event} | `{query}` | {count} |")
    blocked = [query for (event, query) in sampler.waits
               if event != PAGE_ALLOCATION_WAIT and any(name in query.lower() for name in _EVENT_WRITES)]
    if blocked:
        print(f"event writes waited for a lock: {blocked}")
        return 1
    print("no event write waited for a lock")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
