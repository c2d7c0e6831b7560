"""Track records any valid key reads: ``GET /v1/bots/{id}/reputation`` and ``GET /v1/operators/{id}/reputation``
(a publisher's decision times are the marketplace's, ``market.router``)."""

from __future__ import annotations

from fastapi import APIRouter

from bountyboard.accounts.auth import require
from bountyboard.errors import problem_responses
from bountyboard.reputation import service
from bountyboard.reputation.schemas import BotReputationDetail, OperatorReputationDetail
from bountyboard.storage.session import ReadSession

router = APIRouter(prefix="/v1", tags=["agent"], dependencies=[require()], responses=problem_responses(401, 404, 422))


@router.get("/bots/{id}/reputation", summary="A bot's track record, with the success rate's interval",
            response_model=BotReputationDetail,
            description="Decided outcomes weighted by recency (an outcome `halfLifeDays` old counts half), overall "
                        "and per module, with the Jeffreys interval of the success rate. Public to any valid key.")
async def bot_reputation(id: str, session: ReadSession) -> BotReputationDetail:
    return await service.bot_reputation(session, id)


@router.get("/operators/{id}/reputation", summary="An operator's track record (its bots' claims and its own)",
            response_model=OperatorReputationDetail)
async def operator_reputation(id: str, session: ReadSession) -> OperatorReputationDetail:
    return await service.operator_reputation(session, id)

