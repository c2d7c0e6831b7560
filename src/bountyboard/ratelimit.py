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

While Redis does not answer, each policy's ``fail_open`` decides: let the request through uncounted,
or refuse it with 503 ``rate_limit_unavailable``; :data:`storage_outages` counts both for ``/readyz``.

The answer headers follow the IETF ``RateLimit`` header fields draft:
``RateLimit-Policy: "runs-ip";q=30;w=86400`` and ``RateLimit: "runs-ip";r=12;t=3600``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.errors import StorageError
from starlette.requests import Request

from bountyboard import clock
from bountyboard.asgi import add_response_headers
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem

log = logging.getLogger("bountyboard")

@dataclass(frozen=True)
class RatePolicy:
    """``limit`` hits per ``window_seconds`` for each identity; ``name`` keys the counters.

    ``fail_open`` is what happens while the counters cannot be reached (Redis down): the request goes
    through uncounted (True), or is refused with 503 ``rate_limit_unavailable`` (False). Only limits that
    a valid API key stands behind fail open; a limit on an address is all that holds back password
    guessing, sign-up floods and anonymous uploads, so it refuses (docs/security.md).
    """

    name: str
    limit: int
    window_seconds: int
    fail_open: bool = False


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
UNAVAILABLE_RETRY_AFTER_SECONDS = 5  # a refusal's Retry-After while the counters do not answer


def get_storage() -> Storage:
    """The process's counter storage, built on first use from the settings."""
    global _storage
    if _storage is None:
        settings = get_settings()
        if settings.redis_url:
            # limits' default asynchronous Redis client is coredis, which its async-redis extra installs.
            from coredis.exceptions import ConnectionError as RedisConnectionError
            from coredis.retry import ConstantRetryPolicy

            timeout = settings.redis_timeout_seconds
            _storage = RedisStorage(
                f"async+{settings.redis_url}", key_prefix=settings.ratelimit_key_prefix,
                # Failures are raised as limits' StorageError, which the outage policy answers. Short
                # timeouts, and one retry only after a dropped connection (a pooled one Redis closed), so
                # that no request waits long on a Redis that hangs.
                wrap_exceptions=True, connect_timeout=timeout, stream_timeout=timeout,
                # limits types the client's options as scalars; coredis takes this object too.
                retry_policy=ConstantRetryPolicy((RedisConnectionError,), 1, 0),  # type: ignore[arg-type]
            )
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
        answers = bool(await get_storage().check())
    except Exception:  # an unreachable Redis raises from the client: "not ready", never a 500
        return False
    if answers:
        storage_outages.answered()
    return answers


class _Outages:
    """What the limits did, since the process started, while their counters could not be reached:
    requests let through uncounted (limits that fail open) and requests refused (the others). ``/readyz``
    shows both counts; the log says when the counters stop answering and when they answer again."""

    def __init__(self) -> None:
        self.failed_open = 0
        self.refused = 0
        self._failing = False

    def failed(self, policy: RatePolicy, error: StorageError) -> None:
        if policy.fail_open:
            self.failed_open += 1
        else:
            self.refused += 1
        if not self._failing:
            self._failing = True
            log.warning("rate-limit counters do not answer (%s): limits per API key and per user let requests "
                        "through uncounted, limits per address refuse them (503 rate_limit_unavailable); "
                        "/readyz counts both", error)

    def answered(self) -> None:
        if self._failing:
            self._failing = False
            log.warning("rate-limit counters answer again; since the start of the process %d requests went "
                        "through uncounted and %d were refused", self.failed_open, self.refused)

    def counts(self) -> dict[str, int]:
        return {"failedOpen": self.failed_open, "refused": self.refused}


storage_outages = _Outages()


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


async def _count(policy: RatePolicy, identity: str) -> tuple[_Hit, _Usage] | None:
    """Count one hit; over the limit, take it back and raise the 429 problem. While the counters do not
    answer: None (uncounted) for a policy that fails open, else the 503 problem."""
    current_key, previous_key, into = _keys(policy, identity)
    storage = get_storage()
    try:
        # Counters outlive their window by one more, as the next window still weighs them.
        current = await storage.incr(current_key, 2 * policy.window_seconds)
        storage_outages.answered()
        usage = _Usage(await storage.get(previous_key), current, into)
        if usage.used(policy) > policy.limit:
            taken_back = await storage.incr(current_key, 2 * policy.window_seconds, amount=-1)
            raise _refusal(policy, replace(usage, current=taken_back))
    except StorageError as error:
        storage_outages.failed(policy, error)
        if policy.fail_open:
            return None
        raise _unavailable(policy) from error
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


def _unavailable(policy: RatePolicy) -> Problem:
    wait = UNAVAILABLE_RETRY_AFTER_SECONDS
    return Problem(
        503, ErrorCode.RATE_LIMIT_UNAVAILABLE,
        f"Rate limit {policy.name} cannot be counted now: its counters do not answer. Retry after {wait} s.",
        headers={"Retry-After": str(wait)}, retryAfter=wait,
    )


async def enforce(policy: RatePolicy, identity: str) -> dict[str, str]:
    """Count one hit of ``identity`` against ``policy``.

    Under the limit: returns the ``RateLimit-Policy`` and ``RateLimit`` headers for the caller to
    add to its answer. Over it: the hit is taken back and a 429 ``rate_limited`` problem is raised,
    carrying those headers and ``Retry-After`` (seconds until one more hit fits). While the counters
    do not answer, the policy's ``fail_open`` decides: no headers, or the 503 problem.
    """
    counted = await _count(policy, identity)
    return _headers(policy, counted[1]) if counted else {}


class Reservation:
    """Hits counted before the outcome that decides whether they count is known (a log-in counts only
    if the password is wrong). Counted first, they are seen by every request running meanwhile, so
    no more than the limit get past it however many arrive at once; :meth:`release` takes them back
    when the outcome does not count."""

    def __init__(self, hits: list[_Hit]) -> None:
        self._hits = hits

    async def release(self) -> None:
        storage = get_storage()
        hits, self._hits = self._hits, []
        try:
            for hit in hits:
                await storage.incr(hit.counter_key, 2 * hit.policy.window_seconds, amount=-1)
        except StorageError:  # the counters went away meanwhile: the hits stay counted, which errs on the safe side
            log.warning("could not take back %d rate-limit hits", len(hits), exc_info=True)


async def reserve(identity: str, policies: Sequence[RatePolicy]) -> Reservation:
    """Count one hit of ``identity`` against every policy, or none: the 429 problem of the first full
    one is raised after the hits already counted are taken back (a refused request is not counted)."""
    hits: list[_Hit] = []
    try:
        for policy in policies:
            if counted := await _count(policy, identity):
                hits.append(counted[0])
    except Problem:
        await Reservation(hits).release()
        raise
    return Reservation(hits)


# The general limit of each API key ------------------------------------------------------------------

KEY_LIMITED_PREFIXES = ("/v1/agent/", "/v1/tasks")  # agent and publisher routes


def key_policy() -> RatePolicy:
    """The general limit of each API key: settings ``key_rate_limit`` per ``key_rate_window_seconds``."""
    settings = get_settings()
    return RatePolicy("key", settings.key_rate_limit, settings.key_rate_window_seconds, fail_open=True)


async def limit_key(request: Request, key_id: str) -> None:
    """Count a key-authenticated request to an agent or publisher route against its key's limit
    (:func:`key_policy`); called by the authentication."""
    if not request.scope["path"].startswith(KEY_LIMITED_PREFIXES):
        return
    headers = await enforce(key_policy(), key_id)
    add_response_headers(request.scope, [(name.lower().encode(), value.encode()) for name, value in headers.items()])
