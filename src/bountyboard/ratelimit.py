"""Rate limits over sliding windows, counted by the ``limits`` package's storages.

Counters live in process memory by default and in Redis when ``BOUNTYBOARD_REDIS_URL`` is set, so
that every replica of the service shares them. A limit of ``q`` per ``w`` seconds is a sliding
window counter (the algorithm of ``limits``' ``SlidingWindowCounterRateLimiter``): the hits of the
current fixed window plus those of the previous one, weighted by how much of it still overlaps the
last ``w`` seconds. So "30 per 24 hours" holds across midnight instead of starting afresh at 00:00.

The windows are numbered on :mod:`bountyboard.clock`, not on the storage's own clock: the window
number is part of each counter's key, so every replica agrees on the windows, and moving the
service clock (tests, ``POST /v1/admin/clock``) moves the windows with it. ``limits``' own
strategies read the wall clock, which is why this module drives its storages directly.

The answer headers follow the IETF ``RateLimit`` header fields draft:
``RateLimit-Policy: "runs-ip";q=30;w=86400`` and ``RateLimit: "runs-ip";r=12;t=3600``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from bountyboard import clock
from bountyboard.asgi import HTTPMiddleware, on_response_start, with_headers
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem


@dataclass(frozen=True)
class RatePolicy:
    """``limit`` hits per ``window_seconds`` for each identity; ``name`` keys the counters."""

    name: str
    limit: int
    window_seconds: int


@dataclass(frozen=True)
class _Usage:
    previous: int
    current: int
    into: float  # seconds since the current fixed window began

    def used(self, policy: RatePolicy) -> float:
        return self.previous * (1 - self.into / policy.window_seconds) + self.current

    def wait(self, policy: RatePolicy) -> int:
        """Whole seconds until one more hit fits (at least 1)."""
        window, spare = policy.window_seconds, policy.limit - 1
        if self.current <= spare:
            # Within this window, once the previous window's fading weight leaves room for one more.
            seconds = window * (1 - (spare - self.current) / self.previous) - self.into if self.previous else 0.0
        else:
            # Only in the next window, as this window's hits fade in their turn.
            seconds = window - self.into + window * (1 - spare / self.current)
        return max(1, math.ceil(seconds))


_storage: Storage | None = None


def get_storage() -> Storage:
    """The process's counter storage, built on first use from the settings."""
    global _storage
    if _storage is None:
        settings = get_settings()
        if settings.redis_url:
            # limits' default asynchronous Redis client is coredis, which its async-redis extra installs.
            _storage = RedisStorage(f"async+{settings.redis_url}", key_prefix=settings.ratelimit_key_prefix)
        else:
            _storage = MemoryStorage()
    return _storage


def reset_storage() -> None:
    """Forget the storage (settings changed in the same process)."""
    global _storage
    _storage = None


async def storage_answers() -> bool:
    """Whether the counter storage is reachable (``/readyz`` when Redis is configured)."""
    try:
        return bool(await get_storage().check())
    except Exception:  # an unreachable Redis raises from the client: "not ready", never a 500
        return False


def _keys(policy: RatePolicy, identity: str) -> tuple[str, str, float]:
    """The counter keys of the current and previous windows, and the seconds into the current one."""
    current = clock.timestamp()
    number = int(current // policy.window_seconds)
    base = f"{policy.name}/{policy.window_seconds}/{identity}"
    return f"{base}/{number}", f"{base}/{number - 1}", current - number * policy.window_seconds


@dataclass(frozen=True)
class _Hit:
    policy: RatePolicy
    counter_key: str  # the window it was counted in, so that taking it back later finds the same counter


async def _count(policy: RatePolicy, identity: str) -> tuple[_Hit, _Usage]:
    """Count one hit; over the limit, take it back and raise the 429 problem."""
    current_key, previous_key, into = _keys(policy, identity)
    storage = get_storage()
    # Counters outlive their window by one more, as the next window still weighs them.
    current = await storage.incr(current_key, 2 * policy.window_seconds)
    usage = _Usage(await storage.get(previous_key), current, into)
    if usage.used(policy) > policy.limit:
        taken_back = await storage.incr(current_key, 2 * policy.window_seconds, amount=-1)
        raise _refusal(policy, replace(usage, current=taken_back))
    return _Hit(policy, current_key), usage


def _headers(policy: RatePolicy, usage: _Usage) -> dict[str, str]:
    remaining = max(0, math.floor(policy.limit - usage.used(policy)))
    reset = usage.wait(policy) if remaining == 0 else max(1, math.ceil(policy.window_seconds - usage.into))
    return {
        "RateLimit-Policy": f'"{policy.name}";q={policy.limit};w={policy.window_seconds}',
        "RateLimit": f'"{policy.name}";r={remaining};t={reset}',
    }


def _refusal(policy: RatePolicy, usage: _Usage) -> Problem:
    wait = usage.wait(policy)
    headers = {**_headers(policy, usage), "Retry-After": str(wait)}
    headers["RateLimit"] = f'"{policy.name}";r=0;t={wait}'
    return Problem(
        429, ErrorCode.RATE_LIMITED,
        f"Rate limit {policy.name} reached: at most {policy.limit} requests per {policy.window_seconds} s. "
        f"Retry after {wait} s.",
        headers=headers, limit=policy.limit, windowSeconds=policy.window_seconds, retryAfter=wait,
    )


async def enforce(policy: RatePolicy, identity: str) -> dict[str, str]:
    """Count one hit of ``identity`` against ``policy``.

    Under the limit: returns the ``RateLimit-Policy`` and ``RateLimit`` headers for the caller to
    add to its answer. Over it: the hit is taken back and a 429 ``rate_limited`` problem is raised,
    carrying those headers and ``Retry-After`` (seconds until one more hit fits).
    """
    _, usage = await _count(policy, identity)
    return _headers(policy, usage)


class Reservation:
    """Hits counted before the outcome that decides whether they count is known (a log-in counts only
    if the password is wrong). Counted first, they are seen by every request running meanwhile, so
    no more than the limit get past it however many arrive at once; :meth:`release` takes them back
    when the outcome does not count."""

    def __init__(self, hits: list[_Hit]) -> None:
        self._hits = hits

    async def release(self) -> None:
        storage = get_storage()
        for hit in self._hits:
            await storage.incr(hit.counter_key, 2 * hit.policy.window_seconds, amount=-1)
        self._hits = []


async def reserve(identity: str, policies: Sequence[RatePolicy]) -> Reservation:
    """Count one hit of ``identity`` against every policy, or none: the 429 problem of the first full
    one is raised after the hits already counted are taken back (a refused request is not counted)."""
    hits: list[_Hit] = []
    try:
        for policy in policies:
            hits.append((await _count(policy, identity))[0])
    except Problem:
        await Reservation(hits).release()
        raise
    return Reservation(hits)


# The general limit of each API key ------------------------------------------------------------------

KEY_LIMITED_PREFIXES = ("/v1/agent/", "/v1/tasks")  # agent and publisher routes
_STATE_HEADERS = "ratelimit_headers"


async def limit_key(request: Request, key_id: str) -> None:
    """Count a key-authenticated request to an agent or publisher route against its key's limit
    (settings ``key_rate_limit`` per ``key_rate_window_seconds``); called by the authentication."""
    if not request.scope["path"].startswith(KEY_LIMITED_PREFIXES):
        return
    settings = get_settings()
    policy = RatePolicy("key", settings.key_rate_limit, settings.key_rate_window_seconds)
    setattr(request.state, _STATE_HEADERS, await enforce(policy, key_id))


class RateLimitHeadersMiddleware(HTTPMiddleware):
    """Adds the headers :func:`limit_key` left in the request's state to the answer."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope.setdefault("state", {})

        def add_headers(message: Message) -> Message:
            added = state.get(_STATE_HEADERS) or {}
            return with_headers(message, [(name.lower().encode(), value.encode()) for name, value in added.items()])

        await self.app(scope, receive, on_response_start(send, add_headers))
