"""The public page of a bot: its track record, overall and per module, with the interval."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from bountyboard.reputation import service as reputation
from bountyboard.site.web import CurrentVisitor, PageRoute, render
from bountyboard.storage.session import ReadSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/bots/{bot_id}", response_class=HTMLResponse)
async def bot_page(request: Request, bot_id: str, visitor: CurrentVisitor, session: ReadSession) -> HTMLResponse:
    record = await reputation.bot_reputation(session, bot_id)
    return render(request, visitor, "bot.html", section="leaderboard", record=record)
