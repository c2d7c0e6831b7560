"""What every page shares: the visitor (session or anonymous), CSRF checks, rendering, errors.

Pages never answer problem+json: a :class:`PageRoute` turns a service's ``Problem`` into an HTML
page with the same status, and a missing sign-in into a redirect to ``/login``.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from bountyboard.accounts.auth import Actor
from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import KeyKind, Role, allowed_scopes
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem
from bountyboard.site import sessions
from bountyboard.site.models import WebSession
from bountyboard.site.render import build_environment
from bountyboard.storage.session import ReadSession, answered_refusal

CSRF_COOKIE = "bb_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"

templates = Jinja2Templates(env=build_environment())


def secure_cookies() -> bool:
    return get_settings().effective_site_url.startswith("https://")


class SignInRequired(Exception):
    """Raised by pages for signed-in users; answered with a redirect to the log-in page."""


@dataclass
class Visitor:
    user: User | None
    web_session: WebSession | None
    csrf_token: str
    issue_csrf_cookie: bool = False

    @property
    def actor(self) -> Actor:
        """The signed-in user as the service functions see a caller: a user key with every scope of the role."""
        if self.user is None or self.web_session is None:
            raise SignInRequired
        return Actor(user=self.user, bot=None, key_id=f"web:{self.web_session.id}",
                     scopes=frozenset(str(scope) for scope in allowed_scopes(self.user.role, KeyKind.USER)))

    def has_role(self, *roles: Role) -> bool:
        return self.user is not None and self.user.role.acts_as(*roles)


async def current_visitor(request: Request, session: ReadSession) -> Visitor:
    request.state.visitor = visitor = await _identify(request, session)
    return visitor


async def _identify(request: Request, session: AsyncSession) -> Visitor:
    token = request.cookies.get(sessions.SESSION_COOKIE)
    found = await sessions.resolve(session, token) if token else None
    if found is not None:
        web_session, user = found
        return Visitor(user=user, web_session=web_session, csrf_token=web_session.csrf_token)
    # Anonymous forms (sign-up, log-in) use a double-submit token: the cookie must match the field.
    anonymous = request.cookies.get(CSRF_COOKIE, "")
    if 20 <= len(anonymous) <= 100:
        return Visitor(user=None, web_session=None, csrf_token=anonymous)
    return Visitor(user=None, web_session=None, csrf_token=secrets.token_urlsafe(32), issue_csrf_cookie=True)


CurrentVisitor = Annotated[Visitor, Depends(current_visitor)]


async def signed_in_visitor(visitor: CurrentVisitor) -> Visitor:
    if visitor.user is None:
        raise SignInRequired
    return visitor


SignedIn = Annotated[Visitor, Depends(signed_in_visitor)]


async def checked_form(request: Request, visitor: CurrentVisitor) -> FormData:
    """The posted form, after checking its CSRF token (form field, or header for htmx requests)."""
    form = await request.form()
    sent = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER) or ""
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), visitor.csrf_token.encode()):
        raise Problem(403, ErrorCode.CSRF_FAILED,
                      "The form expired or did not come from this site. Reload the page and try again.")
    return form


CheckedForm = Annotated[FormData, Depends(checked_form)]


def _with_role(*roles: Role, posted: bool) -> Callable[..., Coroutine[Any, Any, Visitor]]:
    """A dependency: the signed-in visitor, refused (403) unless they hold one of ``roles``.

    ``posted``: the page takes a form, whose CSRF check comes before the role check.
    """

    async def page(visitor: SignedIn) -> Visitor:
        if not visitor.has_role(*roles):
            names = " or ".join(role.value for role in roles)
            raise Problem(403, ErrorCode.ROLE_REQUIRED, f"This page is for {names} accounts.")
        return visitor

    async def form_post(visitor: SignedIn, _form: CheckedForm) -> Visitor:
        return await page(visitor)

    return form_post if posted else page


PublisherPage = Annotated[Visitor, Depends(_with_role(Role.PUBLISHER, posted=False))]
PublisherPost = Annotated[Visitor, Depends(_with_role(Role.PUBLISHER, posted=True))]
ReviewerPage = Annotated[Visitor, Depends(_with_role(Role.REVIEWER, posted=False))]
ReviewerPost = Annotated[Visitor, Depends(_with_role(Role.REVIEWER, posted=True))]


def page_router() -> APIRouter:
    """A router of site pages: answered by :class:`PageRoute`, none of them in the OpenAPI document."""
    return APIRouter(route_class=PageRoute, include_in_schema=False)


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def render(request: Request, visitor: Visitor, template: str, status_code: int = 200,
           **context: Any) -> HTMLResponse:
    # A page answered to a POST replaces its history entry with a page URL (``history_url``, by default
    # the posted path), so reloading it fetches that page instead of posting the form again.
    if request.method == "POST":
        context.setdefault("history_url", request.url.path)
    response = templates.TemplateResponse(request, template, {"visitor": visitor, "user": visitor.user, **context},
                                          status_code=status_code)
    if visitor.issue_csrf_cookie:
        response.set_cookie(CSRF_COOKIE, visitor.csrf_token, httponly=True, samesite="lax",
                            secure=secure_cookies(), path="/")
    return response


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def field(form: FormData, name: str, default: str = "") -> str:
    value = form.get(name, default)
    return value.strip() if isinstance(value, str) else default


def problem_message(problem: Problem) -> str:
    details = "; ".join(f"{error['field']}: {error['message']}" for error in problem.errors or [])
    return f"{problem.detail} ({details})" if details else problem.detail


class PageRoute(APIRoute):
    """An HTML page: problems become error pages, missing sign-in becomes a redirect."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["response_model"] = None  # pages answer HTML or redirects, never a JSON model
        kwargs["include_in_schema"] = False
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except SignInRequired:
                await answered_refusal(request, None)
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                if request.method != "GET":
                    target = request.url.path
                return redirect(f"/login?next={quote(target, safe='/')}")
            except Problem as problem:
                await answered_refusal(request, problem)
                return _error_page(request, problem.status, problem.title, problem_message(problem),
                                   problem.headers)
            except RequestValidationError as exc:
                await answered_refusal(request, None)
                fields = ", ".join(".".join(str(p) for p in error.get("loc", ())[1:]) for error in exc.errors())
                return _error_page(request, 422, "Unprocessable Content", f"These fields are not valid: {fields}.")

        return page_handler


def _error_page(request: Request, status: int, title: str, message: str,
                headers: dict[str, str] | None = None) -> HTMLResponse:
    visitor = getattr(request.state, "visitor", None) or Visitor(user=None, web_session=None, csrf_token="")
    response = templates.TemplateResponse(request, "error.html",
                                          {"visitor": visitor, "user": visitor.user, "title": title, "message": message,
                                           "status": status}, status_code=status)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response
