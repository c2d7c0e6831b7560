"""Reviewing: the queue of submissions (each artifact shown as it should be seen) and the appeals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import get_args

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from bountyboard.errors import ErrorCode, Problem
from bountyboard.market import service as market
from bountyboard.market import views as market_views
from bountyboard.market.checking import CheckFilter
from bountyboard.market.files.downloads import page_links
from bountyboard.market.models import Claim
from bountyboard.market.modules import Module
from bountyboard.market.review import resolve_appeal, review_claim
from bountyboard.market.schemas import AppealResolve, ReviewDecision
from bountyboard.reputation import service as reputation
from bountyboard.site import web
from bountyboard.site.pages.public import MODULES, choice, paging
from bountyboard.storage.session import ReadSession, WriteSession
from bountyboard.storage.unit_of_work import refused

router = web.page_router()
QUEUE_PAGE_SIZE = 10
NOTICES = {"accept": "Accepted: the bounty is settled.", "reject": "Rejected: the appeal window is open.",
           "upheld": "Appeal upheld: the claim is accepted.", "denied": "Appeal denied."}


def _score(form: FormData) -> float | None:
    raw = web.field(form, "score")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise Problem(422, ErrorCode.INVALID_SCORE, "The score is a number.") from exc


CHECK_FILTERS = list(get_args(CheckFilter))


async def _queue(request: Request, visitor: web.Visitor, session: AsyncSession, *, module: str = "", page: int = 1,
                 status_code: int = 200, error: str | None = None, notice: str | None = None,
                 checks: str = "", order: str = "submitted") -> HTMLResponse:
    queue = await market.review_queue(session, visitor.actor.user, Module(module) if module else None,
                                      paging(page, QUEUE_PAGE_SIZE), checks=checks or None, order=order)
    records = await reputation.overall_of_bots(session, [item.botId for item in queue.data if item.botId])
    return web.render(request, visitor, "review.html", section="review", status_code=status_code, queue=queue,
                      records=records,
                      module=module, modules=MODULES, error=error, notice=notice,
                      checks=checks, order=order, check_filters=CHECK_FILTERS,
                      file_links=page_links(queue.data),
                      history_url="/review/" if request.method == "POST" else None)


@router.get("/review/", response_class=HTMLResponse)
async def review_page(request: Request, visitor: web.ReviewerPage, session: ReadSession, module: str = "",
                      page: int = 1, done: str = "", checks: str = "", order: str = "") -> HTMLResponse:
    return await _queue(request, visitor, session, module=choice(module, MODULES), page=page,
                        notice=NOTICES.get(done), checks=choice(checks, CHECK_FILTERS) or "",
                        order=choice(order, ["submitted", "checks"]) or "submitted")


@router.post("/review/claims/{claim_id}", response_class=HTMLResponse)
async def review(request: Request, claim_id: str, visitor: web.ReviewerPost, form: web.CheckedForm,
                 session: WriteSession) -> HTMLResponse | RedirectResponse:
    decision = web.field(form, "decision")

    async def decide() -> None:
        count = int(web.field(form, "deliverable_count") or "0")
        ticked = {value for value in form.getlist("deliverables") if isinstance(value, str)}
        body = ReviewDecision(
            decision=decision,
            comment=web.field(form, "comment"), score=_score(form),
            deliverables=[str(index) in ticked for index in range(min(count, 50))] if count else None,
        )
        await review_claim(session, visitor.actor.user, claim_id, body)

    return await _decided(session, claim_id, decide(), (ValidationError, ValueError), "Choose accept or reject.",
                          partial(_queue, request, visitor, session), f"/review/?done={decision}")


async def _decided(session: AsyncSession, subject_id: str, decision: Awaitable[None],
                   unreadable: tuple[type[Exception], ...], unreadable_message: str,
                   page: Callable[..., Awaitable[HTMLResponse]], done_url: str) -> HTMLResponse | RedirectResponse:
    """Carry out a reviewer's decision, then go to ``done_url``; a form that cannot be read, or a
    refusal, shows ``page`` again with the reason and its status."""
    try:
        await decision
    except unreadable:
        return await page(status_code=422, error=unreadable_message)
    except Problem as problem:
        await refused(session, problem)
        return await page(status_code=problem.status, error=f"{subject_id}: {web.problem_message(problem)}")
    return web.redirect(done_url)


@router.get("/appeals/", response_class=HTMLResponse)
async def appeals_page(request: Request, visitor: web.ReviewerPage, session: ReadSession, status: str = "open",
                       page: int = 1, done: str = "") -> HTMLResponse:
    return await _appeals(request, visitor, session, status=choice(status, ["open", "resolved"]) or "open",
                          page=page, notice=NOTICES.get(done))


async def _appeals(request: Request, visitor: web.Visitor, session: AsyncSession, *, status: str = "open",
                   page: int = 1, status_code: int = 200, error: str | None = None,
                   notice: str | None = None) -> HTMLResponse:
    appeals = await market.list_appeals(session, visitor.actor.user, status, paging(page, QUEUE_PAGE_SIZE))
    claim_rows = (await session.execute(
        select(Claim).where(Claim.id.in_([appeal.claim_id for appeal in appeals.data]))
    )).scalars().all() if appeals.data else []
    claims = {detail.id: detail for detail in await market_views.claim_details(session, claim_rows)}
    # Appeals against the visitor's own rejections: another reviewer or an admin resolves them.
    own_rejections = {claim.id for claim in claim_rows if claim.reviewer_id == visitor.actor.user_id}
    return web.render(request, visitor, "appeals.html", section="appeals", status_code=status_code, appeals=appeals,
                      file_links=page_links(claims.values()), own_rejections=own_rejections,
                      claims=claims, status=status, error=error, notice=notice,
                      history_url="/appeals/" if request.method == "POST" else None)


@router.post("/appeals/{appeal_id}", response_class=HTMLResponse)
async def resolve(request: Request, appeal_id: str, visitor: web.ReviewerPost, form: web.CheckedForm,
                  session: WriteSession) -> HTMLResponse | RedirectResponse:
    outcome = web.field(form, "outcome")

    async def decide() -> None:
        body = AppealResolve(outcome=outcome, comment=web.field(form, "comment"), score=_score(form))
        await resolve_appeal(session, visitor.actor.user, appeal_id, body)

    return await _decided(session, appeal_id, decide(), (ValidationError,), "Choose uphold or deny.",
                          partial(_appeals, request, visitor, session), f"/appeals/?done={outcome}")
