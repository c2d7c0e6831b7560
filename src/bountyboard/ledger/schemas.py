"""Request and response shapes of the ledger (camelCase on the wire)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, EmailStr, Field

from bountyboard.accounts.schemas import ApiModel


class Balance(BaseModel):
    account: str = Field(examples=["user:usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    balance: float = Field(description="In currency units.")
    balanceCents: int


class CreditRequest(ApiModel):
    email: EmailStr
    amount: Decimal = Field(gt=0, le=Decimal(10**11), decimal_places=2)
    memo: str = Field(default="admin deposit", max_length=200)


class LedgerCheck(BaseModel):
    balanced: bool
    totalCents: int
    unbalancedTransfers: list[str]
    mismatchedAccounts: list[str]
    overdrawnAccounts: list[str]
    accounts: int
