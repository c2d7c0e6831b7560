"""Webhooks: create, rotate, test and delete subscriptions; delivery history and redelivery."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.errors import ErrorCode, Problem
from bountyboard.events import webhooks
from bountyboard.events.kinds import OPERATOR_KINDS, PUBLIC_KINDS
from bountyboard.events.models import WebhookEndpoint
from bountyboard.events.service import Owner
from bountyboard.site import web
from bountyboard.site.charts import TIMELINE_HEIGHT, TIMELINE_WIDTH, delivery_timeline
from bountyboard.storage.session import ReadSession, WriteSession

router = web.page_router()
HISTORY_LENGTH = 50

def _operator(visitor: web.Visitor) -> Owner:
    return Owner(operator_id=visitor.actor.user_id)

async def _list(request: Request, visitor: web.Visitor, session: AsyncSession, *, status_code: int = 200,
                error: str | None = None, created: WebhookEndpoint | None = None,
                form: dict[str, object] | None = None) -> HTMLResponse:
    endpoints = await webhooks.list_endpoints(session, _operator(visitor))
    bots = {bot.id: bot for bot in await accounts.list_bots(session, visitor.actor.user_id)}
    return web.render(request, visitor, "webhooks.html", status_code=status_code, endpoints=endpoints, bots=bots,
                      public_kinds=PUBLIC_KINDS, operator_kinds=OPERATOR_KINDS, error=error, created=created,
                      form=form or {"events": list(OPERATOR_KINDS)})

@router.get("/webhooks/", response_class=HTMLResponse)
async def webhooks_page(request: Request, visitor: web.SignedIn, session: ReadSession) -> HTMLResponse:
    return await _list(request, visitor, session)

@router.post("/webhooks/", response_class=HTMLResponse)
async def create_webhook(request: Request, visitor: web.SignedIn, form: web.CheckedForm,
                         session: WriteSession) -> HTMLResponse:
    events = [value for value in form.getlist("events") if isinstance(value, str)]
    values: dict[str, object] = {"url": web.field(form, "url"), "description": web.field(form, "description"),
                                 "owner": web.field(form, "owner"), "events": events}
    try:
        owner = _operator(visitor)
        if values["owner"]:
            bot = await accounts.get_own_bot(session, owner.operator_id, str(values["owner"]))
            owner = Owner(operator_id=owner.operator_id, bot_id=bot.id)
        if not events:
            raise Problem(422, ErrorCode.NO_EVENTS, "Tick at least one event kind.")
        endpoint = await webhooks.create_endpoint(session, owner, str(values["url"]), events,
                                                  str(values["description"])[:500])
    except Problem as problem:
        return await _list(request, visitor, session, status_code=problem.status, error=web.problem_message(problem),
                           form=values)
    response = await _list(request, visitor, session, created=endpoint)
    response.headers["Cache-Control"] = "no-store"
    return response

NOTICES = {
    "test": "Test event queued; its attempt appears below within seconds.",
    "redeliver": "The event is queued again with a fresh retry schedule.",
}


async def _detail(request: Request, visitor: web.Visitor, session: AsyncSession, endpoint_id: str, *,
                  secret: str | None = None, notice: str | None = None) -> HTMLResponse:
    owner = _operator(visitor)
    endpoint = await webhooks.get_endpoint(session, owner, endpoint_id)
    attempts, more = await webhooks.list_attempts(session, owner, endpoint_id, limit=HISTORY_LENGTH)
    bot = await accounts.get_own_bot(session, owner.operator_id, endpoint.bot_id) if endpoint.bot_id else None
    return web.render(request, visitor, "webhook.html", endpoint=endpoint, bot=bot, attempts=attempts, more=more,
                      bars=delivery_timeline(attempts), chart_width=TIMELINE_WIDTH, chart_height=TIMELINE_HEIGHT,
                      secret=secret, notice=notice, history_url=f"/webhooks/{endpoint.id}")

@router.get("/webhooks/{endpoint_id}", response_class=HTMLResponse)
async def webhook_page(request: Request, endpoint_id: str, visitor: web.SignedIn, session: ReadSession,
                       done: str = "") -> HTMLResponse:
    return await _detail(request, visitor, session, endpoint_id, notice=NOTICES.get(done))

@router.post("/webhooks/{endpoint_id}/rotate", response_class=HTMLResponse)
async def rotate(request: Request, endpoint_id: str, visitor: web.SignedIn, form: web.CheckedForm,
                 session: WriteSession) -> HTMLResponse:
    endpoint = await webhooks.rotate_secret(session, _operator(visitor), endpoint_id)
    response = await _detail(request, visitor, session, endpoint_id, secret=endpoint.secret,
                             notice="New secret made. The previous one keeps signing for 24 hours.")
    response.headers["Cache-Control"] = "no-store"
    return response

@router.post("/webhooks/{endpoint_id}/test", response_class=HTMLResponse)
async def send_test(request: Request, endpoint_id: str, visitor: web.SignedIn, form: web.CheckedForm,
                    session: WriteSession) -> HTMLResponse:
    event = await webhooks.send_test_event(session, _operator(visitor), endpoint_id)
    return await _detail(request, visitor, session, endpoint_id,
                         notice=f"Test event {event.id} queued; its attempt appears below within seconds.")

@router.post("/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver", response_class=HTMLResponse)
async def redeliver(request: Request, endpoint_id: str, delivery_id: str, visitor: web.SignedIn, form: web.CheckedForm,
                    session: WriteSession) -> HTMLResponse:
    _message, event_id = await webhooks.redeliver(session, _operator(visitor), endpoint_id, delivery_id)
    return await _detail(request, visitor, session, endpoint_id, notice=f"Event {event_id} queued again.")

@router.post("/webhooks/{endpoint_id}/delete")
async def delete(endpoint_id: str, visitor: web.SignedIn, form: web.CheckedForm,
                 session: WriteSession) -> RedirectResponse:
    await webhooks.delete_endpoint(session, _operator(visitor), endpoint_id)
    return web.redirect("/webhooks/")
