"""The OAuth consent page: the signed-in operator picks the bot an MCP client acts as, and its scopes.

``/authorize`` (the SDK's handler, ``bountyboard.oauth``) has checked the client, its redirect URI and PKCE, and
sends the browser here with the request sealed in the URL. Allowing issues an authorization code and sends the
browser back to the client's redirect URI with it and ``state``; denying sends ``error=access_denied``.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from mcp.server.auth.provider import construct_redirect_uri
from mcp.shared.auth import OAuthClientInformationFull
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.scopes import KeyKind, allowed_scopes
from bountyboard.config import get_settings
from bountyboard.contract.scopes import RECOMMENDED_WORKER_SCOPES, Scope
from bountyboard.errors import ErrorCode, Problem
from bountyboard.oauth.provider import CONSENT_PATH, PendingAuthorization, issue_code, load_client, open_request
from bountyboard.site import web
from bountyboard.site.pages.profile import SCOPE_HELP
from bountyboard.storage.session import ReadSession, WriteSession

router = web.page_router()


async def _pending(session: AsyncSession, sealed: str) -> tuple[PendingAuthorization, OAuthClientInformationFull]:
    pending = open_request(sealed)
    client = await load_client(session, pending.client_id) if pending is not None else None
    if pending is None or client is None:
        raise Problem(400, ErrorCode.AUTHORIZATION_REQUEST_INVALID,
                      "This authorization request has expired or is not valid: connect again from your client.")
    return pending, client


def _grantable(visitor: web.Visitor, pending: PendingAuthorization) -> list[Scope]:
    """The scopes the operator may grant: a bot key's (for their role), within those the client asked for."""
    asked = pending.params.scopes
    permitted = allowed_scopes(visitor.actor.user.role, KeyKind.BOT)
    return [scope for scope in Scope if scope in permitted and (not asked or scope in asked)]


async def _page(request: Request, visitor: web.Visitor, session: AsyncSession, sealed: str,
                pending: PendingAuthorization, client: OAuthClientInformationFull, *, chosen: list[str],
                error: str | None = None, status_code: int = 200) -> HTMLResponse:
    redirect_to = urlsplit(str(pending.params.redirect_uri))
    return web.render(
        request, visitor, "oauth_consent.html", status_code=status_code, error=error, sealed=sealed,
        client_name=client.client_name or client.client_id, redirect_to=f"{redirect_to.scheme}://{redirect_to.netloc}",
        bots=await accounts.list_bots(session, visitor.actor.user_id), scopes=_grantable(visitor, pending),
        chosen=set(chosen),
        scope_help=SCOPE_HELP, lifetime_minutes=get_settings().oauth_access_token_ttl_seconds // 60,
        history_url=f"{CONSENT_PATH}?request={quote(sealed)}",
    )


@router.get(CONSENT_PATH, response_class=HTMLResponse)
async def consent_page(request: Request, visitor: web.SignedIn, session: ReadSession) -> HTMLResponse:
    # Read by hand: a parameter named "request" would clash with the Request argument.
    sealed = request.query_params.get("request", "")
    pending, client = await _pending(session, sealed)
    asked = pending.params.scopes or [str(scope) for scope in RECOMMENDED_WORKER_SCOPES]
    return await _page(request, visitor, session, sealed, pending, client, chosen=asked)


@router.post(CONSENT_PATH, response_class=HTMLResponse)
async def consent(request: Request, visitor: web.SignedIn, form: web.CheckedForm,
                  session: WriteSession) -> HTMLResponse | RedirectResponse:
    sealed = web.field(form, "request")
    pending, client = await _pending(session, sealed)
    redirect_uri, state = str(pending.params.redirect_uri), pending.params.state
    if web.field(form, "decision") != "allow":
        return web.redirect(construct_redirect_uri(redirect_uri, error="access_denied", state=state))
    chosen = [value for value in form.getlist("scopes") if isinstance(value, str)]
    try:
        if not chosen:
            raise Problem(422, ErrorCode.NO_SCOPES, "Tick at least one scope.")
        refused = sorted(set(chosen) - {str(scope) for scope in _grantable(visitor, pending)})
        if refused:
            raise Problem(403, ErrorCode.SCOPE_NOT_ALLOWED, f"A bot of yours cannot carry: {', '.join(refused)}.")
        bot = await accounts.get_own_bot(session, visitor.actor.user_id, web.field(form, "bot_id"))
    except Problem as problem:
        return await _page(request, visitor, session, sealed, pending, client, chosen=chosen,
                           error=web.problem_message(problem), status_code=problem.status)
    code = await issue_code(session, pending, visitor.actor.user, bot.id, chosen)
    return web.redirect(construct_redirect_uri(redirect_uri, code=code, state=state))
