"""Who is paid what when a task completes: the arena's ranked split, or the whole escrow to one winner."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.events.kinds import ArenaRanking, EventKind, TaskClosedArenaData, TaskClosedWinnerData
from bountyboard.events.service import emit
from bountyboard.ledger import service as ledger
from bountyboard.market.locks import locking
from bountyboard.market.models import Claim, ClaimStatus, Task
from bountyboard.market.slots import wind_up
from bountyboard.market.transitions import TaskMove, move_task


def split_pot(pot_cents: int, split_bps: list[int], winners: int) -> list[int]:
    """Cents per rank: each place its share (rounded down); the rounding rest goes to first place
    when every place is filled. Shares of unfilled places stay in escrow (and are refunded)."""
    shares = [pot_cents * bps // 10_000 for bps in split_bps[:winners]]
    if shares and winners >= len(split_bps):
        shares[0] += pot_cents - sum(shares)
    return shares


async def close_arena(session: AsyncSession, task: Task, current: datetime) -> None:
    """published | in_progress -> completed: rank accepted submissions by score and pay the split."""
    winners = list((await session.execute(locking(
        select(Claim).where(Claim.task_id == task.id, Claim.status == ClaimStatus.ACCEPTED)
        .order_by(Claim.score.desc(), Claim.submitted_at, Claim.id)
    ))).scalars())
    escrow = ledger.escrow_account(task.id)
    shares = split_pot(await ledger.balance(session, escrow), task.payout_split or [10_000], len(winners))
    rankings: list[ArenaRanking] = []
    for rank, claim in enumerate(winners, start=1):
        claim.rank = rank
        amount = shares[rank - 1] if rank <= len(shares) else 0
        if amount > 0:
            await ledger.transfer(session, escrow, ledger.user_account(claim.operator_id), amount,
                                  ledger.EntryKind.PAYOUT, task_id=task.id, claim_id=claim.id,
                                  memo=f"arena rank {rank}")
        claim.payout_cents = amount
        rankings.append(ArenaRanking(rank=rank, claimId=claim.id, botId=claim.bot_id, score=claim.score,
                                     payoutAmount=ledger.from_cents(amount)))
    refunded = await ledger.refund_escrow(session, task.id)
    await wind_up(session, task, current)
    move_task(task, TaskMove.CLOSE)
    task.ended_at = task.updated_at = current
    await emit(session, EventKind.TASK_CLOSED, TaskClosedArenaData(
        taskId=task.id, module=task.module, status=task.status, rankings=rankings,
        refundedAmount=ledger.from_cents(refunded),
    ), publisher_id=task.publisher_id)


async def pay_winner(session: AsyncSession, task: Task, claim: Claim, current: datetime) -> None:
    """Non-arena acceptance: the whole escrow goes to the claim holder's operator; the task completes."""
    amount = await ledger.balance(session, ledger.escrow_account(task.id))
    if amount > 0:
        await ledger.transfer(session, ledger.escrow_account(task.id), ledger.user_account(claim.operator_id),
                              amount, ledger.EntryKind.PAYOUT, task_id=task.id, claim_id=claim.id, memo="bounty")
    claim.payout_cents = amount
    claim.rank = 1
    move_task(task, TaskMove.COMPLETE)
    task.ended_at = task.updated_at = current
    await emit(session, EventKind.TASK_CLOSED, TaskClosedWinnerData(
        taskId=task.id, module=task.module, status=task.status, winningClaimId=claim.id,
        payoutAmount=ledger.from_cents(amount),
    ), publisher_id=task.publisher_id)
