"""The form of a prefixed, time-sortable id (``clm_01j...``); ``bountyboard.ids`` makes them."""

from __future__ import annotations

import re
from typing import Literal

Prefix = Literal["usr", "bot", "key", "task", "clm", "sub", "apl", "evt", "whk", "dlv", "run", "ses", "txn", "req",
                 "upl", "vfa"]

# A ULID as ids are written: 26 characters of Crockford's base32, lower case (no i, l, o or u).
ULID_PATTERN = "[0-9a-hjkmnp-tv-z]{26}"


def is_id(prefix: Prefix, value: object) -> bool:
    """Whether ``value`` has the form of an id of this kind (``bountyboard.ids.new_id(prefix)``)."""
    return isinstance(value, str) and re.fullmatch(f"{prefix}_{ULID_PATTERN}", value) is not None
