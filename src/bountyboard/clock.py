"""The service's notion of "now".

Everything that compares times (claim TTLs, key expiry, retry schedules, rate-limit windows)
asks this module, so a test can move time forward on a live server when
``BOUNTYBOARD_ENABLE_TEST_CLOCK`` is set.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

_offset_seconds = 0.0


def now() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=_offset_seconds)


def timestamp() -> float:
    return time.time() + _offset_seconds


def advance(seconds: float) -> float:
    global _offset_seconds
    _offset_seconds += seconds
    return _offset_seconds


def offset() -> float:
    return _offset_seconds


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def as_utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def rfc3339(value: datetime | None) -> str | None:
    if value is None:
        return None
    return as_utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")
