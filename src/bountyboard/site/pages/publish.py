"""Publishing: a form per module (its own fields appear with it), the publisher's tasks and their claims."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from bountyboard.errors import ErrorCode, Problem
from bountyboard.ledger import service as ledger
from bountyboard.market import service as market
from bountyboard.market import task_flows
from bountyboard.market.modules import MODULE_TEXTS
from bountyboard.market.schemas import TaskCreate
from bountyboard.site import web
from bountyboard.site.pages.public import MODULES, paging, show_task
from bountyboard.storage.session import ReadSession, WriteSession
from bountyboard.storage.unit_of_work import refused

router = web.page_router()

MODULE_HINTS = {module.value: text.hint for module, text in MODULE_TEXTS.items()}


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _task_fields(form: FormData) -> dict[str, Any]:
    """The form, as the API's TaskCreate fields (only those the chosen module uses)."""
    module = web.field(form, "module")
    fields: dict[str, Any] = {"module": module, "title": web.field(form, "title"),
                              "description": web.field(form, "description")}
    try:
        fields["bountyAmount"] = Decimal(web.field(form, "bounty") or "0")
    except InvalidOperation as exc:
        raise Problem(422, ErrorCode.INVALID_BOUNTY, "The bounty is a number such as 25 or 12.50.") from exc
    if ttl := web.field(form, "claim_ttl_minutes"):
        fields["claimTtlSeconds"] = int(ttl) * 60 if ttl.isdigit() else -1
    if deadline := web.field(form, "deadline"):
        try:
            fields["deadline"] = datetime.fromisoformat(deadline + ("" if deadline.endswith("Z") else "Z"))
        except ValueError as exc:
            raise Problem(422, ErrorCode.INVALID_DEADLINE, "The deadline is a date and time.") from exc
    if module == "arena":
        max_claims = web.field(form, "max_claims")
        fields["maxClaims"] = int(max_claims or "1") if web.field(form, "max_claims", "1").isdigit() else 0
        if split := web.field(form, "payout_split"):
            try:
                fields["payoutSplit"] = [Decimal(part.strip()) for part in split.split(",") if part.strip()]
            except InvalidOperation as exc:
                raise Problem(422, ErrorCode.INVALID_SPLIT,
                              "The payout split is fractions like 0.6, 0.3, 0.1.") from exc
    if module == "exchange":
        fields["deliverables"] = _lines(web.field(form, "deliverables"))
    if module == "crew":
        fields["repositoryUrl"] = web.field(form, "repository_url") or None
    if module == "translate":
        fields["sourceLanguage"] = web.field(form, "source_language") or None
        fields["targetLanguage"] = web.field(form, "target_language") or None
    if module == "judge":
        fields["targetClaimId"] = web.field(form, "target_claim_id") or None
        if rubric := web.field(form, "rubric"):
            try:
                fields["rubric"] = json.loads(rubric)
            except ValueError as exc:
                raise Problem(422, ErrorCode.INVALID_RUBRIC, "The rubric is a JSON Schema object.") from exc
    return fields


def _validation_message(error: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors()[:5]]
    return "The task is not valid: " + "; ".join(parts)


async def _page(request: Request, visitor: web.Visitor, session: AsyncSession, *, module: str, page: int = 1,
                status_code: int = 200, error: str | None = None, form: dict[str, str] | None = None) -> HTMLResponse:
    user = visitor.actor.user
    tasks = await market.list_publisher_tasks(session, user, None, None, paging(page))
    balance = await ledger.balance(session, ledger.user_account(user.id))
    return web.render(request, visitor, "publish.html", section="publish", status_code=status_code, tasks=tasks,
                      module=module, modules=MODULES, hints=MODULE_HINTS, balance=ledger.from_cents(balance),
                      error=error, form=form or {})


@router.get("/publish/", response_class=HTMLResponse)
async def publish_page(request: Request, visitor: web.PublisherPage, session: ReadSession, module: str = "exchange",
                       page: int = 1) -> HTMLResponse:
    return await _page(request, visitor, session, module=module if module in MODULES else "exchange", page=page)


@router.get("/publish/fields", response_class=HTMLResponse)
async def module_fields(request: Request, visitor: web.CurrentVisitor, module: str = "exchange") -> HTMLResponse:
    """The module-specific part of the form (htmx swaps it in when the module changes)."""
    return web.render(request, visitor, "partials/module_fields.html", module=module if module in MODULES else "fun",
                      hints=MODULE_HINTS, form={})


@router.post("/publish/", response_class=HTMLResponse)
async def create_task(request: Request, visitor: web.PublisherPost, form: web.CheckedForm,
                      session: WriteSession) -> HTMLResponse | RedirectResponse:
    values = {key: value for key, value in form.items() if isinstance(value, str) and key != "csrf_token"}
    module = values.get("module", "") if values.get("module") in MODULES else "exchange"
    try:
        body = TaskCreate.model_validate(_task_fields(form))
        task = await market.create_task(session, visitor.actor.user, body)
    except ValidationError as exc:
        return await _page(request, visitor, session, module=module, status_code=422,
                           error=_validation_message(exc), form=values)
    except Problem as problem:
        return await _page(request, visitor, session, module=module, status_code=problem.status,
                           error=web.problem_message(problem), form=values)
    if values.get("publish_now"):
        try:
            # The draft is kept (the unit of work commits it), what publishing wrote is rolled back.
            async with session.begin_nested():
                await task_flows.publish_task(session, visitor.actor.user, task.id)
        except Problem as problem:
            # Its page says why it is not published yet (e.g. the balance is short).
            return await show_task(request, visitor, session, task.id, status_code=problem.status,
                                   error=f"Saved as a draft, not published: {web.problem_message(problem)}")
    return web.redirect(f"/tasks/{task.id}")


ACTIONS = {"publish": task_flows.publish_task, "cancel": task_flows.cancel_task, "close": task_flows.close_task}


@router.post("/publish/tasks/{task_id}/{action}", response_class=HTMLResponse)
async def task_action(request: Request, task_id: str, action: str, visitor: web.PublisherPost, form: web.CheckedForm,
                      session: WriteSession) -> HTMLResponse | RedirectResponse:
    if action not in ACTIONS:
        raise Problem(404, ErrorCode.NOT_FOUND, f"No action {action!r} on tasks.")
    try:
        await ACTIONS[action](session, visitor.actor.user, task_id)
    except Problem as problem:
        await refused(session, problem)
        return await show_task(request, visitor, session, task_id, status_code=problem.status,
                               error=web.problem_message(problem))
    return web.redirect(f"/tasks/{task_id}")


