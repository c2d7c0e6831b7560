"""Prefixed, time-sortable identifiers (``clm_01J...``), as Stripe does."""

from __future__ import annotations

from typing import Literal

from ulid import ULID

Prefix = Literal["usr", "bot", "key", "task", "clm", "sub", "apl", "evt", "whk", "dlv", "run", "ses", "txn", "req",
                 "upl"]


def new_id(prefix: Prefix) -> str:
    return f"{prefix}_{str(ULID()).lower()}"
