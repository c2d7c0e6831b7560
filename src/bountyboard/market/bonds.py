"""Claim bonds: what a task's ``claimBond`` asks of a claimant, held while the claim is open.

On claim the bond moves from the claimant's operator's balance to the claim's own account
(``bond:<claim_id>``). A decided submission (accepted or rejected by review) returns it; a claim
given back (released) or whose TTL ran out forfeits it to the task's publisher. A claim that ends
because its task ended first (cancelled, expired, an arena closed) gets it back: that is not the
claimant's failure. Every move is a ledger transfer, so the ledger balances.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.ledger import service as ledger
from bountyboard.market.models import Claim, Task


class BondState(StrEnum):
    HELD = "held"
    RETURNED = "returned"
    FORFEITED = "forfeited"


def bond_of(task: Task) -> dict[str, Any]:
    """A new claim's bond columns: the task's claim bond, held; none when the task asks for none."""
    if task.claim_bond_cents <= 0:
        return {}
    return {"bond_cents": task.claim_bond_cents, "bond_state": BondState.HELD.value}


async def hold_bond(session: AsyncSession, task: Task, claim: Claim) -> None:
    """Take a new claim's held bond (``bond_of``) from the claimant's operator (402 ``insufficient_funds``
    if short)."""
    if claim.bond_state != BondState.HELD.value:
        return
    await ledger.transfer(session, ledger.user_account(claim.operator_id), ledger.bond_account(claim.id),
                          claim.bond_cents, ledger.EntryKind.BOND, task_id=task.id, claim_id=claim.id,
                          memo="claim bond")


async def settle_bond(session: AsyncSession, task: Task, claim: Claim, *, forfeit: bool) -> None:
    """Give a held bond back to the claimant's operator, or forfeit it to the publisher (once)."""
    if claim.bond_state != BondState.HELD.value:
        return
    to, kind, state = ((task.publisher_id, ledger.EntryKind.BOND_FORFEIT, BondState.FORFEITED) if forfeit
                       else (claim.operator_id, ledger.EntryKind.BOND_RETURN, BondState.RETURNED))
    await ledger.transfer(session, ledger.bond_account(claim.id), ledger.user_account(to), claim.bond_cents, kind,
                          task_id=task.id, claim_id=claim.id, memo=f"claim bond {state.value}")
    claim.bond_state = state.value
