"""Prefixed, time-sortable identifiers (``clm_01J...``), as Stripe does; their form: ``contract.ids``."""

from __future__ import annotations

from ulid import ULID

from bountyboard.contract.ids import Prefix


def new_id(prefix: Prefix) -> str:
    return f"{prefix}_{str(ULID()).lower()}"
