"""Prefixed, time-sortable identifiers (``clm_01J...``), as Stripe does."""

from __future__ import annotations

import re
from typing import Literal

from ulid import ULID

Prefix = Literal["usr", "bot", "key", "task", "clm", "sub", "apl", "evt", "whk", "dlv", "run", "ses", "txn", "req",
                 "upl"]

# A ULID as new_id writes it: 26 characters of Crockford's base32, lower case (no i, l, o or u).
_ULID = "[0-9a-hjkmnp-tv-z]{26}"


def new_id(prefix: Prefix) -> str:
    return f"{prefix}_{str(ULID()).lower()}"


def is_id(prefix: Prefix, value: object) -> bool:
    """Whether ``value`` has the form of an id that ``new_id(prefix)`` makes."""
    return isinstance(value, str) and re.fullmatch(f"{prefix}_{_ULID}", value) is not None
