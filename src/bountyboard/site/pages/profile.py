"""The profile page: API keys (create, shown once, list with last use, revoke) and bots."""

from __future__ import annotations

from datetime import timedelta

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.schemas import ApiKeyCreated
from bountyboard.accounts.scopes import KeyKind, allowed_scopes
from bountyboard.clock import now
from bountyboard.contract.scopes import RECOMMENDED_WORKER_SCOPES, Scope
from bountyboard.errors import ErrorCode, Problem
from bountyboard.ledger import service as ledger
from bountyboard.site import web
from bountyboard.storage.session import ReadSession, WriteSession

router = web.page_router()

EXPIRY_CHOICES = [("", "Never"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days"), ("365", "1 year")]
SCOPE_HELP = {
    Scope.PROFILE_READ: "read the profile and the key list",
    Scope.TASKS_READ: "list and read tasks",
    Scope.TASKS_CLAIM: "claim, heartbeat and release tasks",
    Scope.CLAIMS_SUBMIT: "submit results and appeal",
    Scope.CLAIMS_READ: "read claims and poll events",
    Scope.JUDGE_READ: "read the submission a judge task evaluates",
    Scope.LEADERBOARD_READ: "read the leaderboard",
    Scope.AGENT_MANAGE: "manage bots and keys (user keys only)",
    Scope.WEBHOOKS_MANAGE: "manage webhooks",
    Scope.RUNS_WRITE: "upload benchmark runs",
    Scope.TASKS_PUBLISH: "publish tasks",
    Scope.CLAIMS_REVIEW: "review submissions and appeals",
    Scope.ADMIN: "administer the service",
}


async def _profile(request: Request, visitor: web.Visitor, session: AsyncSession, *, status_code: int = 200,
                   created: ApiKeyCreated | None = None, error: str | None = None,
                   chosen: list[str] | None = None) -> HTMLResponse:
    user = visitor.actor.user
    keys = await accounts.list_keys(session, user.id)
    bots = await accounts.list_bots(session, user.id)
    scopes = sorted(allowed_scopes(user.role, KeyKind.USER), key=list(Scope).index)
    balance = ledger.from_cents(await ledger.balance(session, ledger.user_account(user.id)))
    return web.render(
        request, visitor, "profile.html", status_code=status_code, keys=keys,
        bots={bot.id: bot for bot in bots}, scopes=scopes, scope_help=SCOPE_HELP,
        chosen=set(chosen if chosen is not None else [str(scope) for scope in RECOMMENDED_WORKER_SCOPES]),
        expiry_choices=EXPIRY_CHOICES, created=created, error=error, now=now(), balance=balance,
    )


@router.get("/profile/", response_class=HTMLResponse)
async def profile_page(request: Request, visitor: web.SignedIn, session: ReadSession) -> HTMLResponse:
    return await _profile(request, visitor, session)


@router.get("/profile")
async def profile_slash() -> RedirectResponse:
    return web.redirect("/profile/")


@router.post("/profile/", response_class=HTMLResponse)
async def create_key(request: Request, visitor: web.SignedIn, form: web.CheckedForm,
                     session: WriteSession) -> HTMLResponse:
    chosen = [value for value in form.getlist("scopes") if isinstance(value, str)]
    try:
        kind = KeyKind(web.field(form, "kind", "bot"))
        expiry = web.field(form, "expires_days")
        if expiry and not expiry.isdigit():
            raise Problem(422, ErrorCode.INVALID_EXPIRY, "Choose an expiry from the list.")
        if not chosen:
            raise Problem(422, ErrorCode.NO_SCOPES, "Tick at least one scope.")
        created = await accounts.issue_key(
            session, visitor.actor.user, kind, chosen,
            bot_id=(web.field(form, "bot_id") or None) if kind is KeyKind.BOT else None,
            name=web.field(form, "name")[:120], expires_at=now() + timedelta(days=int(expiry)) if expiry else None,
        )
    except (Problem, ValueError) as exc:
        message = web.problem_message(exc) if isinstance(exc, Problem) else "Choose a key kind and valid scopes."
        return await _profile(request, visitor, session, status_code=getattr(exc, "status", 422), error=message,
                              chosen=chosen)
    # The secret is rendered into this one answer and never again (a redirect would lose it).
    response = await _profile(request, visitor, session, created=created)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/profile/keys/{key_id}/revoke", response_class=HTMLResponse)
async def revoke_key(request: Request, key_id: str, visitor: web.SignedIn, form: web.CheckedForm,
                     session: WriteSession) -> HTMLResponse | RedirectResponse:
    key = await accounts.revoke_key(session, visitor.actor.user_id, key_id)
    if web.is_htmx(request):
        bots = {bot.id: bot for bot in await accounts.list_bots(session, visitor.actor.user_id)}
        return web.render(request, visitor, "partials/key_row.html", key=key, bots=bots, now=now())
    return web.redirect("/profile/")
