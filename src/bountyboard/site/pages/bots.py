"""Bots: an operator's worker identities."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.schemas import BotCreate
from bountyboard.errors import Problem
from bountyboard.site.web import CheckedForm, PageRoute, SignedIn, field, problem_message, redirect, render
from bountyboard.storage.session import ReadSession, WriteSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/bots/", response_class=HTMLResponse)
async def bots_page(request: Request, visitor: SignedIn, session: ReadSession) -> HTMLResponse:
    return await _bots(request, visitor, session)


async def _bots(request: Request, visitor: SignedIn, session: AsyncSession, status_code: int = 200,
                error: str | None = None, form: dict[str, str] | None = None) -> HTMLResponse:
    user_id = visitor.actor.user_id
    bots = await accounts.list_bots(session, user_id)
    keys = await accounts.list_keys(session, user_id)
    live_keys: dict[str, int] = {}
    for key in keys:
        if key.bot_id and key.revoked_at is None:
            live_keys[key.bot_id] = live_keys.get(key.bot_id, 0) + 1
    return render(request, visitor, "bots.html", status_code=status_code, bots=bots, live_keys=live_keys,
                  error=error, form=form or {})


@router.post("/bots/", response_class=HTMLResponse)
async def create_bot(request: Request, visitor: SignedIn, form: CheckedForm,
                     session: WriteSession) -> HTMLResponse | RedirectResponse:
    values = {"name": field(form, "name"), "description": field(form, "description"),
              "max_active_claims": field(form, "max_active_claims", "1") or "1"}
    try:
        # The API's own shape validates the name and the limits, so the site accepts exactly what the API does.
        body = BotCreate(name=values["name"], description=values["description"],
                         maxActiveClaims=int(values["max_active_claims"]))
        await accounts.create_bot(session, visitor.actor.user, body.name, body.description, body.maxActiveClaims)
    except Problem as problem:
        return await _bots(request, visitor, session, problem.status, problem_message(problem), values)
    except (ValidationError, ValueError):
        return await _bots(request, visitor, session, 422,
                           "A bot name starts with a letter or digit and uses letters, digits, spaces, . _ -; "
                           "the claim limit is 1 to 100.", values)
    return redirect("/bots/")
