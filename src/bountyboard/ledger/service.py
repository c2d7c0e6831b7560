"""Double-entry money movements: deposits, escrow, payouts and refunds.

Amounts are integer cents. Every transfer writes two entries that sum to zero and updates both
accounts' balances, with the account rows locked (in name order, so two transfers never wait on
each other crosswise). Callers commit: a transfer is part of the domain change that causes it.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from enum import StrEnum

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.models import User
from bountyboard.clock import now
from bountyboard.errors import ErrorCode, Problem, invalid
from bountyboard.ids import new_id
from bountyboard.ledger.models import LedgerAccount, LedgerEntry
from bountyboard.ledger.money import format_money
from bountyboard.ledger.schemas import Balance

DEPOSITS = "external:deposits"
MAX_AMOUNT_CENTS = 10**13


class EntryKind(StrEnum):
    DEPOSIT = "deposit"
    ESCROW = "escrow"
    FUND = "fund"
    PAYOUT = "payout"
    REFUND = "refund"
    # Claim bonds (market.bonds): held from the claimant's operator, then returned or forfeited to the publisher.
    BOND = "bond"
    BOND_RETURN = "bond_return"
    BOND_FORFEIT = "bond_forfeit"


def user_account(user_id: str) -> str:
    return f"user:{user_id}"


def escrow_account(task_id: str) -> str:
    return f"escrow:{task_id}"


def bond_account(claim_id: str) -> str:
    return f"bond:{claim_id}"


def to_cents(amount: Decimal | int | str, field: str = "amount") -> int:
    """A money amount in currency units (at most two decimals) as integer cents."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation as exc:
        raise invalid(f"{field} is not a number.", [{"field": field, "message": "not a number"}]) from exc
    cents = value * 100
    if not value.is_finite() or cents != cents.to_integral_value():
        raise invalid(f"{field} must have at most two decimal places.",
                      [{"field": field, "message": "at most two decimal places"}])
    if cents < 0 or cents > MAX_AMOUNT_CENTS:
        raise invalid(f"{field} must be between 0 and {MAX_AMOUNT_CENTS // 100}.",
                      [{"field": field, "message": "out of range"}])
    return int(cents)


def from_cents(cents: int) -> float:
    """Cents as a JSON number in currency units (exact for every amount below 2**53 cents)."""
    return cents / 100


async def _ensure_accounts(session: AsyncSession, names: list[str]) -> None:
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    await session.execute(
        insert(LedgerAccount).values([{"name": name, "balance_cents": 0, "updated_at": now()} for name in names])
        .on_conflict_do_nothing(index_elements=["name"])
    )


async def transfer(
    session: AsyncSession,
    source: str,
    destination: str,
    amount_cents: int,
    kind: EntryKind,
    *,
    task_id: str | None = None,
    claim_id: str | None = None,
    memo: str = "",
) -> str:
    """Move money; refuses (402 ``insufficient_funds``) to overdraw any account but an external one."""
    if amount_cents <= 0 or source == destination:
        raise ValueError("a transfer moves a positive amount between two accounts")
    names = sorted({source, destination})
    await _ensure_accounts(session, names)
    rows = (await session.execute(
        select(LedgerAccount).where(LedgerAccount.name.in_(names)).order_by(LedgerAccount.name)
        .with_for_update().execution_options(populate_existing=True)
    )).scalars().all()
    accounts = {row.name: row for row in rows}
    payer = accounts[source]
    if not source.startswith("external:") and payer.balance_cents < amount_cents:
        raise Problem(402, ErrorCode.INSUFFICIENT_FUNDS,
                      f"The balance of {source} is {format_money(from_cents(payer.balance_cents))}, "
                      f"which does not cover {format_money(from_cents(amount_cents))}.",
                      balance=from_cents(payer.balance_cents), required=from_cents(amount_cents))
    current = now()
    txn_id = new_id("txn")
    payer.balance_cents -= amount_cents
    accounts[destination].balance_cents += amount_cents
    for account in (payer, accounts[destination]):
        account.updated_at = current
    session.add_all([
        LedgerEntry(txn_id=txn_id, account=source, amount_cents=-amount_cents, kind=kind.value, task_id=task_id,
                    claim_id=claim_id, memo=memo, created_at=current),
        LedgerEntry(txn_id=txn_id, account=destination, amount_cents=amount_cents, kind=kind.value,
                    task_id=task_id, claim_id=claim_id, memo=memo, created_at=current),
    ])
    await session.flush()
    return txn_id


async def balance(session: AsyncSession, account: str) -> int:
    value = await session.scalar(select(LedgerAccount.balance_cents).where(LedgerAccount.name == account))
    return int(value or 0)


async def deposit(session: AsyncSession, user_id: str, amount_cents: int, memo: str = "") -> str:
    """Credit a user's balance from outside the system (an admin deposit). The caller commits."""
    if amount_cents <= 0:
        raise invalid("amount must be above zero.", [{"field": "amount", "message": "must be above zero"}])
    return await transfer(session, DEPOSITS, user_account(user_id), amount_cents, EntryKind.DEPOSIT, memo=memo)


async def balance_of(session: AsyncSession, user_id: str) -> Balance:
    account = user_account(user_id)
    cents = await balance(session, account)
    return Balance(account=account, balance=from_cents(cents), balanceCents=cents)


async def _user_by_email(session: AsyncSession, email: str) -> User:
    user = await accounts.get_user_by_email(session, email)
    if user is None:
        raise Problem(404, ErrorCode.NOT_FOUND, f"No user with the email {email}.")
    return user


async def balance_by_email(session: AsyncSession, email: str) -> Balance:
    """The balance of the user with ``email`` (``admin balance``)."""
    return await balance_of(session, (await _user_by_email(session, email)).id)


async def credit(session: AsyncSession, email: str, amount_cents: int, memo: str = "admin deposit") -> Balance:
    """Deposit into the balance of the user with ``email`` (``admin credit`` and ``POST /v1/admin/credit``)."""
    user = await _user_by_email(session, email)
    await deposit(session, user.id, amount_cents, memo)
    await session.flush()
    return await balance_of(session, user.id)


async def contributions(session: AsyncSession, task_id: str) -> dict[str, int]:
    """What each account paid into a task's escrow (the publisher's escrow and any donations)."""
    rows = await session.execute(
        select(LedgerEntry.account, func.sum(LedgerEntry.amount_cents))
        .where(LedgerEntry.task_id == task_id, LedgerEntry.kind.in_([EntryKind.ESCROW.value, EntryKind.FUND.value]),
               LedgerEntry.account != escrow_account(task_id))
        .group_by(LedgerEntry.account).order_by(LedgerEntry.account)
    )
    return {account: -int(total) for account, total in rows if total}


async def refund_escrow(session: AsyncSession, task_id: str) -> int:
    """Return everything left in a task's escrow to those who paid it in. Returns the cents refunded."""
    escrow = escrow_account(task_id)
    left = await balance(session, escrow)
    refunded = 0
    for account, paid in (await contributions(session, task_id)).items():
        amount = min(paid, left - refunded)
        if amount > 0:
            await transfer(session, escrow, account, amount, EntryKind.REFUND, task_id=task_id)
            refunded += amount
    return refunded


async def check(session: AsyncSession) -> dict[str, object]:
    """The ledger's invariants: entries sum to zero overall and per transfer, balances match entries."""
    total = int(await session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount_cents), 0))) or 0)
    unbalanced = (await session.execute(
        select(LedgerEntry.txn_id).group_by(LedgerEntry.txn_id)
        .having((func.sum(LedgerEntry.amount_cents) != 0) | (func.count() != 2)).limit(20)
    )).scalars().all()
    sums = dict((await session.execute(
        select(LedgerEntry.account, func.sum(LedgerEntry.amount_cents)).group_by(LedgerEntry.account)
    )).all())
    accounts = (await session.execute(select(LedgerAccount))).scalars().all()
    mismatched = [a.name for a in accounts if int(sums.get(a.name) or 0) != a.balance_cents]
    overdrawn = [a.name for a in accounts if a.balance_cents < 0 and not a.name.startswith("external:")]
    return {
        "balanced": total == 0 and not unbalanced and not mismatched and not overdrawn,
        "totalCents": total,
        "unbalancedTransfers": list(unbalanced),
        "mismatchedAccounts": mismatched,
        "overdrawnAccounts": overdrawn,
        "accounts": len(accounts),
    }
