"""Tables of the ledger: accounts with their running balance, and the double-entry rows."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.storage.base import Base, UTCDateTime

Cents = BigInteger().with_variant(Integer, "sqlite")


class LedgerAccount(Base):
    """One account (``user:<id>``, ``escrow:<task_id>``, ``external:deposits``) and its balance.

    The balance is the sum of the account's entries, kept here so that a transfer can lock the row
    and check it; ``GET /v1/admin/ledger/check`` verifies that the two agree.
    """

    __tablename__ = "ledger_accounts"

    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    balance_cents: Mapped[int] = mapped_column(Cents, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class LedgerEntry(Base):
    """One leg of a transfer; the two legs of a transfer share ``txn_id`` and sum to zero."""

    __tablename__ = "ledger_entries"

    id: Mapped[int] = mapped_column(Cents, primary_key=True, autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(40), index=True)
    account: Mapped[str] = mapped_column(String(80), index=True)
    amount_cents: Mapped[int] = mapped_column(Cents)
    kind: Mapped[str] = mapped_column(String(20))
    task_id: Mapped[str | None] = mapped_column(String(40), index=True)
    claim_id: Mapped[str | None] = mapped_column(String(40))
    memo: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
