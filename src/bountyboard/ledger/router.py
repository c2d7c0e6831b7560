"""HTTP routes of the ledger: a caller's balance, admin deposits and the ledger's self-check."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from bountyboard.accounts.auth import Actor, require
from bountyboard.accounts.dependencies import AdminActor
from bountyboard.contract.scopes import Scope
from bountyboard.errors import problem_responses
from bountyboard.ledger import service
from bountyboard.ledger.schemas import Balance, CreditRequest, LedgerCheck
from bountyboard.storage.session import ReadSession, WriteSession

router = APIRouter(prefix="/v1", tags=["ledger"], responses=problem_responses(401, 403, 422))


@router.get("/profile/balance", tags=["profile"], summary="The operator's balance", response_model=Balance)
async def my_balance(session: ReadSession, actor: Annotated[Actor, require(Scope.PROFILE_READ)]) -> Balance:
    return await service.balance_of(session, actor.user_id)


@router.post("/admin/credit", tags=["admin"], summary="Deposit into a user's balance (admin)",
             response_model=Balance, responses=problem_responses(404))
async def admin_credit(body: CreditRequest, actor: AdminActor, session: WriteSession) -> Balance:
    return await service.credit(session, body.email, service.to_cents(body.amount), body.memo)


@router.get("/admin/ledger/check", tags=["admin"], summary="Verify the ledger's invariants (admin)",
            response_model=LedgerCheck)
async def ledger_check(session: ReadSession, actor: AdminActor) -> LedgerCheck:
    return LedgerCheck.model_validate(await service.check(session))
