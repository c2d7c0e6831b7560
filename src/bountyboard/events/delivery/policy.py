"""What a failed attempt leads to: when the row is tried again, and whether its endpoint is disabled.

Pure rules, no I/O (DESIGN.md section 7): ten attempts over about three days, a receiver's
``Retry-After`` honoured up to a day, and an endpoint disabled when it answers ``410 Gone``, when its
destination is refused as not public, or when a delivery spent the whole schedule with no success
to the endpoint since that delivery was queued.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from datetime import datetime

# Delays after the 1st, 2nd, ... failed attempt: ten attempts over about three days.
RETRY_DELAYS_SECONDS: tuple[int, ...] = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
MAX_ATTEMPTS = len(RETRY_DELAYS_SECONDS) + 1
JITTER = 0.1
RETRY_AFTER_CAP_SECONDS = 86400.0

Uniform = Callable[[float, float], float]


def retry_delay(attempts_made: int, time_scale: float = 1.0, uniform: Uniform = random.uniform) -> float | None:
    """Seconds before the next attempt after ``attempts_made`` failures; None when the schedule is spent.

    The schedule's delay times ``time_scale``, spread by ``JITTER`` either way (``uniform(low, high)``
    draws the point in that range)."""
    if attempts_made >= MAX_ATTEMPTS:
        return None
    base = RETRY_DELAYS_SECONDS[attempts_made - 1] * time_scale
    return base * uniform(1 - JITTER, 1 + JITTER)


def parse_retry_after(value: str | None, at: float | None = None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date, counted from ``at``, the current Unix
    time unless given), capped at a day; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), RETRY_AFTER_CAP_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if at is None else at
    return min(max(when.timestamp() - current, 0.0), RETRY_AFTER_CAP_SECONDS)


def next_attempt_in(attempt: int, *, refused: bool, retry_after: float | None, time_scale: float = 1.0,
                    uniform: Uniform = random.uniform) -> float | None:
    """Seconds until a row whose attempt number ``attempt`` failed is due again: its schedule's delay,
    or the receiver's ``Retry-After`` if that is longer. None when the row is not tried again: its
    destination was refused as not public, or that was the last attempt of the schedule."""
    if refused:
        return None
    delay = retry_delay(attempt, time_scale, uniform)
    if delay is None:
        return None
    return max(delay, retry_after or 0.0)


def disable_reason(*, status_code: int | None, refused: bool, error: str | None, exhausted: bool,
                   last_success_at: datetime | None, message_created_at: datetime) -> str | None:
    """Why a failed attempt disables its endpoint, or None when it does not.

    ``exhausted``: the row is not tried again; ``last_success_at``: the endpoint's last success
    (this batch's included); ``message_created_at``: when the failed row was queued."""
    if status_code == 410:
        return "The endpoint answered 410 Gone."
    if refused:
        return (error or "The destination is refused.")[:200]
    if exhausted and (last_success_at is None or last_success_at < message_created_at):
        return (f"Every attempt failed for {MAX_ATTEMPTS} attempts over the whole retry schedule, with no "
                "successful delivery meanwhile.")
    return None
