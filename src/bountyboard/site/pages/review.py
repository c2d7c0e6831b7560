"""Reviewing: the queue of submissions (each artifact shown as it should be seen) and the appeals."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy import select
from starlette.datastructures import FormData

from bountyboard.accounts.scopes import Role
from bountyboard.errors import ErrorCode, Problem
from bountyboard.files.downloads import page_links
from bountyboard.market import service as market
from bountyboard.market.models import Claim, Task
from bountyboard.market.modules import Module
from bountyboard.market.review import resolve_appeal, review_claim
from bountyboard.market.schemas import AppealResolve, ReviewDecision
from bountyboard.site.pages.public import MODULES, choice, paging
from bountyboard.site.web import (
    CheckedForm,
    PageRoute,
    Session,
    SignedIn,
    Visitor,
    field,
    problem_message,
    redirect,
    render,
    require_page_role,
)

router = APIRouter(route_class=PageRoute, include_in_schema=False)
QUEUE_PAGE_SIZE = 10
NOTICES = {"accept": "Accepted: the bounty is settled.", "reject": "Rejected: the appeal window is open.",
           "upheld": "Appeal upheld: the claim is accepted.", "denied": "Appeal denied."}


def _score(form: FormData) -> float | None:
    raw = field(form, "score")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise Problem(422, ErrorCode.INVALID_SCORE, "The score is a number.") from exc


async def _queue(request: Request, visitor: Visitor, session: Session, *, module: str = "", page: int = 1,
                 status_code: int = 200, error: str | None = None, notice: str | None = None) -> HTMLResponse:
    queue = await market.review_queue(session, visitor.actor.user, Module(module) if module else None,
                                      paging(page, QUEUE_PAGE_SIZE))
    deliverables = await _deliverables(session, [item.taskId for item in queue.data])
    return render(request, visitor, "review.html", section="review", status_code=status_code, queue=queue,
                  module=module, modules=MODULES, deliverables=deliverables, error=error, notice=notice,
                  file_links=page_links(queue.data),
                  history_url="/review/" if request.method == "POST" else None)


async def _deliverables(session: Session, task_ids: list[str]) -> dict[str, list[str]]:
    """Each queued task's deliverables, for the reviewer's ticks."""
    if not task_ids:
        return {}
    rows = await session.execute(select(Task.id, Task.deliverables).where(Task.id.in_(set(task_ids))))
    return {task_id: list(items or []) for task_id, items in rows.tuples()}


@router.get("/review/", response_class=HTMLResponse)
async def review_page(request: Request, visitor: SignedIn, session: Session, module: str = "", page: int = 1,
                      done: str = "") -> HTMLResponse:
    require_page_role(visitor, Role.REVIEWER)
    return await _queue(request, visitor, session, module=choice(module, MODULES), page=page,
                        notice=NOTICES.get(done))


@router.post("/review/claims/{claim_id}", response_class=HTMLResponse)
async def review(request: Request, claim_id: str, visitor: SignedIn, form: CheckedForm,
                 session: Session) -> HTMLResponse | RedirectResponse:
    require_page_role(visitor, Role.REVIEWER)
    decision = field(form, "decision")
    try:
        count = int(field(form, "deliverable_count") or "0")
        ticked = {value for value in form.getlist("deliverables") if isinstance(value, str)}
        body = ReviewDecision(
            decision=decision,
            comment=field(form, "comment"), score=_score(form),
            deliverables=[str(index) in ticked for index in range(min(count, 50))] if count else None,
        )
        await review_claim(session, visitor.actor.user, claim_id, body)
    except (ValidationError, ValueError):
        return await _queue(request, visitor, session, status_code=422, error="Choose accept or reject.")
    except Problem as problem:
        await session.rollback()
        return await _queue(request, visitor, session, status_code=problem.status,
                            error=f"{claim_id}: {problem_message(problem)}")
    return redirect(f"/review/?done={decision}")


@router.get("/appeals/", response_class=HTMLResponse)
async def appeals_page(request: Request, visitor: SignedIn, session: Session, status: str = "open",
                       page: int = 1, done: str = "") -> HTMLResponse:
    require_page_role(visitor, Role.REVIEWER)
    return await _appeals(request, visitor, session, status=choice(status, ["open", "resolved"]) or "open",
                          page=page, notice=NOTICES.get(done))


async def _appeals(request: Request, visitor: Visitor, session: Session, *, status: str = "open", page: int = 1,
                   status_code: int = 200, error: str | None = None, notice: str | None = None) -> HTMLResponse:
    appeals = await market.list_appeals(session, visitor.actor.user, status, paging(page, QUEUE_PAGE_SIZE))
    claim_rows = (await session.execute(
        select(Claim).where(Claim.id.in_([appeal.claimId for appeal in appeals.data]))
    )).scalars().all() if appeals.data else []
    claims = {detail.id: detail for detail in await market.claim_details(session, claim_rows)}
    return render(request, visitor, "appeals.html", section="appeals", status_code=status_code, appeals=appeals,
                  file_links=page_links(claims.values()),
                  claims=claims, status=status, error=error, notice=notice,
                  history_url="/appeals/" if request.method == "POST" else None)


@router.post("/appeals/{appeal_id}", response_class=HTMLResponse)
async def resolve(request: Request, appeal_id: str, visitor: SignedIn, form: CheckedForm,
                  session: Session) -> HTMLResponse | RedirectResponse:
    require_page_role(visitor, Role.REVIEWER)
    outcome = field(form, "outcome")
    try:
        body = AppealResolve(outcome=outcome, comment=field(form, "comment"),
                             score=_score(form))
        await resolve_appeal(session, visitor.actor.user, appeal_id, body)
    except ValidationError:
        return await _appeals(request, visitor, session, status_code=422, error="Choose uphold or deny.")
    except Problem as problem:
        await session.rollback()
        return await _appeals(request, visitor, session, status_code=problem.status,
                              error=f"{appeal_id}: {problem_message(problem)}")
    return redirect(f"/appeals/?done={outcome}")
