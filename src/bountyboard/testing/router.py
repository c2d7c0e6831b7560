"""Test-only routes, every one for an admin key; mounted by ``app.create_app`` only in test deployments."""

from __future__ import annotations

from fastapi import APIRouter

from bountyboard.accounts.dependencies import AdminActor
from bountyboard.events.schemas import EventOut
from bountyboard.pagination import DataList
from bountyboard.storage.session import WriteSession
from bountyboard.testing import service
from bountyboard.testing.schemas import ClockAdvance, ClockState, EventBurst, Hold

router = APIRouter(prefix="/v1/admin", tags=["admin"], include_in_schema=False)


@router.post("/clock", summary="Move the service clock forward", response_model=ClockState)
async def advance_clock(body: ClockAdvance, actor: AdminActor) -> ClockState:
    return service.advance_clock(body.seconds)


@router.post("/test/hold", summary="Answer after a delay")
async def hold(body: Hold, actor: AdminActor) -> dict[str, float]:
    return await service.hold(body.seconds)


@router.post("/events", summary="Emit events through the real emit() path", response_model=DataList[EventOut])
async def emit_events(body: EventBurst, actor: AdminActor, session: WriteSession) -> DataList[EventOut]:
    return DataList(data=[EventOut.of(event) for event in await service.emit_burst(session, body)])
