"""Where a claim + submit cycle's time goes on the loop's thread: its phases, timed in process.

The app runs in this process (httpx's ``ASGITransport``, no socket, one client walking one bot's cycles), so
the time measured inside the app is the loop's own, without the HTTP server or a load generator. Each phase
is timed around its call (the functions in ``PHASES``, patched for the run), and two routes that exist only
here give the floor under any write request: a ``POST`` that checks the caller's key and answers, and one that
also begins and commits an empty unit of work. A phase's time includes those it calls (an event's write is
inside its flow). Phases run one after another here: under wrk, 16 bots interleave them.

Before the cycle, the cached ``GET /v1/agent/tasks`` is timed with pieces of every key-checked request taken
out in turn (``PIECES``), rounds alternating, medians printed: what each piece costs a request.

    .venv/bin/python -m perf.cycle_phases [--backend sqlite|postgresql|both] [--cycles 300]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import functools
import importlib
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from fastapi import APIRouter
from tests.support.server import database_url

import bountyboard.accounts.auth
from bountyboard.asgi import add_response_headers
from bountyboard.market.router import Claimer
from bountyboard.ratelimit import enforce, key_policy
from bountyboard.storage.session import WriteSession
from bountyboard.storage.stamps import SQLiteStamps
from perf import statements
from perf.floor import chosen_backends
from perf.market_load import SUBMISSION, _ok, _seed

# (module, function): the cycle's phases, each timed where its caller looks it up.
PHASES = [
    ("bountyboard.market.claim_flows", "claim_task"), ("bountyboard.market.submissions", "submit"),
    ("bountyboard.storage.unit_of_work", "begin"), ("bountyboard.storage.unit_of_work", "_commit"),
    ("bountyboard.market.claim_flows", "emit"), ("bountyboard.market.submissions", "emit"),
    ("bountyboard.events.service", "_store"), ("bountyboard.events.service", "_subscribers"),
    ("bountyboard.market.claim_flows", "lock_task"), ("bountyboard.market.claim_flows", "lock_holder"),
    ("bountyboard.market.claim_flows", "lapse_task"), ("bountyboard.market.claim_flows", "require_eligible"),
    ("bountyboard.market.claim_flows", "_check_holder"), ("bountyboard.market.claim_flows", "insert_new"),
    ("bountyboard.market.claim_flows", "write_changes"), ("bountyboard.market.submissions", "held_claim"),
    ("bountyboard.market.submissions", "_same_submission"), ("bountyboard.market.submissions", "insert_new"),
    ("bountyboard.market.submissions", "write_changes"),
]


async def _key_limit_headers_only(request: Any, key_id: str) -> None:
    """The per-key limit's two answer headers, nothing counted."""
    add_response_headers(request.scope, [(b"ratelimit-policy", b'"key";q=600;w=60'),
                                         (b"ratelimit", b'"key";r=599;t=60')])


async def _key_limit_count_only(request: Any, key_id: str) -> None:
    """The per-key limit counted as ``limit_key`` counts it, no answer header."""
    await enforce(key_policy(), key_id)


async def _no_key_limit(request: Any, key_id: str) -> None:
    return None


def _data_version_once(read: Callable[[SQLiteStamps], int | None]) -> Callable[[SQLiteStamps], int | None]:
    """``SQLiteStamps.data_version`` read once, then the same number: the stamps without their pragma."""
    kept: dict[int, int | None] = {}

    def once(stamps: SQLiteStamps) -> int | None:
        if id(stamps) not in kept:
            kept[id(stamps)] = read(stamps)
        return kept[id(stamps)]

    return once


# Pieces of a key-checked GET, each replaced in turn: (label, object, attribute, replacement).
PIECES: list[tuple[str, Any, str, Any]] = [
    ("as served", None, "", None),
    ("the per-key limit neither counted nor in the headers", bountyboard.accounts.auth, "limit_key", _no_key_limit),
    ("the per-key limit counted, no headers", bountyboard.accounts.auth, "limit_key", _key_limit_count_only),
    ("the per-key limit's headers, nothing counted", bountyboard.accounts.auth, "limit_key", _key_limit_headers_only),
    ("the stamps without `PRAGMA data_version` (SQLite's; no change on PostgreSQL)", SQLiteStamps, "data_version",
     _data_version_once(SQLiteStamps.data_version)),
]


@contextlib.contextmanager
def replaced(owner: Any, name: str, replacement: Any) -> Iterator[None]:
    if owner is None:
        yield
        return
    saved = getattr(owner, name)
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, saved)


class Clock:
    """Seconds spent in each timed phase, and in the app as a whole."""

    def __init__(self) -> None:
        self.spent: collections.Counter[str] = collections.Counter()

    def timed(self, label: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(call)
        async def timed_call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - started

        return timed_call

    def app(self, app: Any) -> Any:
        async def timed_app(scope: Any, receive: Any, send: Any) -> None:
            await self.timed("the app, in all", app)(scope, receive, send)

        return timed_app


@contextlib.contextmanager
def phases_timed(clock: Clock) -> Iterator[None]:
    saved = []
    for module_name, name in PHASES:
        module = importlib.import_module(module_name)
        saved.append((module, name, getattr(module, name)))
        setattr(module, name, clock.timed(f"{module_name.rsplit('.', 1)[-1]}.{name}", getattr(module, name)))
    try:
        yield
    finally:
        for module, name, call in saved:
            setattr(module, name, call)


def with_floor_routes(app: Any) -> None:
    """Two routes first in the app's table (no routing cost to tell apart): the key check alone, and the key
    check with an empty unit of work."""
    router = APIRouter(prefix="/v1/perf")

    @router.post("/{id}/key-only")
    async def key_only(id: str, actor: Claimer) -> dict[str, str]:
        return {"id": id, "bot": actor.bot_id or ""}

    @router.post("/{id}/empty-unit")
    async def empty_unit(id: str, actor: Claimer, session: WriteSession) -> dict[str, str]:
        return {"id": id, "bot": actor.bot_id or ""}

    app.router.routes[0:0] = router.routes


async def one_cycle(http: httpx.AsyncClient, bot: dict[str, str], arena: str) -> None:
    """One claim + submit of the bot whose headers are ``bot``, on ``arena``, through the app in process."""
    claim = _ok(await http.post(f"/v1/agent/tasks/{arena}/claim", headers=bot))
    _ok(await http.post(f"/v1/agent/claims/{claim['claimId']}/submit", headers=bot, json=SUBMISSION))


async def measure(cycles: int, admin_key: str) -> list[str]:
    from bountyboard.app import create_app

    app = create_app()
    with_floor_routes(app)
    clock = Clock()
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=clock.app(app)), base_url="http://perf", timeout=60) as http:
        keys, arenas = await _seed(http, admin_key, 1, 0, cycles + 20)
        bot = {"Authorization": f"Bearer {keys[0]}"}

        for arena in arenas[:20]:  # warm: statements compiled, caches filled
            await one_cycle(http, bot, arena)
        lines = await pieces_of_a_get(http, clock, bot)
        for route in ("key-only", "empty-unit"):
            clock.spent.clear()
            for index in range(cycles):
                _ok(await http.post(f"/v1/perf/{index}/{route}", headers=bot))
            lines.append(f"| POST {route} (one request) | {clock.spent['the app, in all'] / cycles * 1e6:.0f} |  |")
        clock.spent.clear()
        with phases_timed(clock):
            for arena in arenas[20:]:
                await one_cycle(http, bot, arena)
        for label, seconds in clock.spent.most_common():
            lines.append(f"| {label} | {seconds / cycles * 1e6:.0f} | per cycle |")
        return lines


async def pieces_of_a_get(http: httpx.AsyncClient, clock: Clock, bot: dict[str, str], rounds: int = 8,
                          requests: int = 1000) -> list[str]:
    """The cached task list's time in the app with each of ``PIECES`` replaced, rounds alternating."""
    url = "/v1/agent/tasks?status=published"
    for _ in range(requests):  # warm: the answer cached, the caller's key resolved
        _ok(await http.get(url, headers=bot))
    spent: dict[str, list[float]] = {label: [] for label, *_ in PIECES}
    for _ in range(rounds):
        for label, owner, name, replacement in PIECES:
            clock.spent.clear()
            with replaced(owner, name, replacement):
                for _ in range(requests):
                    _ok(await http.get(url, headers=bot))
            spent[label].append(clock.spent["the app, in all"] / requests * 1e6)
    return [f"| GET /v1/agent/tasks (cached), {label} | {statistics.median(times):.0f} | median of {rounds} rounds |"
            for label, times in spent.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="sqlite")
    parser.add_argument("--cycles", type=int, default=300)
    args = parser.parse_args()
    for backend in chosen_backends(args.backend):
        with tempfile.TemporaryDirectory(prefix="cycle-phases-") as tmp, database_url(backend, Path(tmp)) as url, \
                statements.prepared(url, Path(tmp)) as admin_key:
            print(f"\n{backend}: {args.cycles} cycles, one bot, in process\n")
            print("| phase | us | |\n|---|---|---|")
            for line in asyncio.run(measure(args.cycles, admin_key)):
                print(line)


if __name__ == "__main__":
    main()
