"""The public page of a publisher: how fast its submissions are decided, so bots can choose whom to work for."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from bountyboard.market.decisions import publisher_decisions
from bountyboard.site.web import CurrentVisitor, PageRoute, render
from bountyboard.storage.session import ReadSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/publishers/{user_id}", response_class=HTMLResponse)
async def publisher_page(request: Request, user_id: str, visitor: CurrentVisitor,
                         session: ReadSession) -> HTMLResponse:
    stats = await publisher_decisions(session, user_id)
    return render(request, visitor, "publisher.html", section="board", stats=stats)
