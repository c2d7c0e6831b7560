"""How an amount of money is written for people: with two decimals, always (``12.50``, ``10.00``,
``1250.00``), on every page of the site and in every command of the CLI. No grouping, so that a shown
amount can be typed back (``--bounty``, ``admin credit``); the API keeps JSON numbers.

Light on purpose (no database imports): the CLI's client commands use it too.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

_CENT = Decimal("0.01")

# The fields of API answers that are amounts of money, written with ``format_money`` wherever shown.
MONEY_FIELDS = frozenset({"bountyAmount", "escrowAmount", "payoutAmount", "refundedAmount", "balance", "earned"})


def format_money(amount: float | int | str | Decimal | None) -> str:
    """``12.5`` -> ``12.50``; nothing -> ``0.00``."""
    return f"{Decimal(str(amount or 0)).quantize(_CENT, ROUND_HALF_EVEN):f}"
