"""Sign-up, log-in and log-out."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from bountyboard.accounts import service as accounts
from bountyboard.accounts.passwords import MIN_PASSWORD_LENGTH
from bountyboard.accounts.scopes import Role
from bountyboard.errors import ErrorCode, Problem
from bountyboard.ratelimit import RatePolicy, enforce, reserve
from bountyboard.site import sessions
from bountyboard.site.web import (
    CheckedForm,
    CurrentVisitor,
    PageRoute,
    field,
    problem_message,
    redirect,
    render,
    secure_cookies,
)
from bountyboard.storage.session import WriteSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)

# Guessing passwords: failed log-ins slow down the address that makes them, for that account only, with
# waits growing from about a minute to hours as failures pile up; nobody can lock the owner out from
# elsewhere. A ceiling per client address (loose enough for many people behind one NAT, tight enough
# to stop spraying passwords over many accounts) comes on top.
LOGIN_FAILURES = (
    RatePolicy("site-login-failures-minute", 5, 60),
    RatePolicy("site-login-failures-quarter", 10, 15 * 60),
    RatePolicy("site-login-failures-day", 20, 24 * 3600),
)
LOGIN_PER_IP = RatePolicy("site-login-ip", 100, 15 * 60)
SIGNUP_PER_IP = RatePolicy("site-signup-ip", 20, 3600)


# A same-site path: one leading slash, then no second slash, backslash, whitespace or control character that
# a browser could turn into a scheme-relative URL (an open redirect).
_SAME_SITE_PATH = re.compile(r"^/(?![/\\])[A-Za-z0-9/_\-.~%?=&+:@!$'()*,;]*\Z")


# Long enough for the OAuth consent page's URL, which carries the sealed authorization request.
_MAX_NEXT_LENGTH = 4000


def _safe_next(target: str) -> str:
    return target if _SAME_SITE_PATH.match(target) and len(target) <= _MAX_NEXT_LENGTH else "/profile/"


def _signed_in(response: RedirectResponse, token: str) -> RedirectResponse:
    response.set_cookie(sessions.SESSION_COOKIE, token, max_age=int(sessions.SESSION_LIFETIME.total_seconds()),
                        httponly=True, samesite="lax", secure=secure_cookies(), path="/")
    return response


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.get("/signup", response_class=HTMLResponse)
async def signup_page(request: Request, visitor: CurrentVisitor) -> HTMLResponse:
    return render(request, visitor, "signup.html", min_length=MIN_PASSWORD_LENGTH, form={})


@router.post("/signup", response_class=HTMLResponse)
async def signup(request: Request, visitor: CurrentVisitor, form: CheckedForm,
                 session: WriteSession) -> RedirectResponse | HTMLResponse:
    await enforce(SIGNUP_PER_IP, _client(request))
    values = {"email": field(form, "email"), "display_name": field(form, "display_name"),
              "publisher": field(form, "publisher")}
    password = field(form, "password")
    role = Role.PUBLISHER if values["publisher"] else Role.OPERATOR
    try:
        if password != field(form, "password_again"):
            raise Problem(422, ErrorCode.PASSWORD_MISMATCH, "The two passwords differ.")
        if "@" not in values["email"]:
            raise Problem(422, ErrorCode.INVALID_EMAIL, "Enter an email address.")
        user = await accounts.create_user(session, values["email"], role, password, values["display_name"] or None)
    except Problem as problem:
        return render(request, visitor, "signup.html", status_code=problem.status, error=problem_message(problem),
                      min_length=MIN_PASSWORD_LENGTH, form=values)
    return _signed_in(redirect("/profile/"), await sessions.start(session, user))


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, visitor: CurrentVisitor, next: str = "/profile/") -> HTMLResponse:
    return render(request, visitor, "login.html", next=_safe_next(next), email="")


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, visitor: CurrentVisitor, form: CheckedForm,
                session: WriteSession) -> RedirectResponse | HTMLResponse:
    email = accounts.normalise_email(field(form, "email"))
    target = _safe_next(field(form, "next", "/profile/"))
    await enforce(LOGIN_PER_IP, _client(request))
    # Counted as a failure before the password is checked, so that guesses sent all at once are held
    # to the same thresholds as guesses sent in turn; the right password takes the failure back.
    failure = await reserve(f"{email} {_client(request)}", LOGIN_FAILURES)
    user = await accounts.authenticate_password(session, email, field(form, "password"))
    if user is None:
        return render(request, visitor, "login.html", status_code=401, next=target, email=email,
                      error="The email or the password is wrong.")
    await failure.release()
    return _signed_in(redirect(target), await sessions.start(session, user))


@router.post("/logout")
async def logout(request: Request, visitor: CurrentVisitor, form: CheckedForm,
                 session: WriteSession) -> RedirectResponse:
    token = request.cookies.get(sessions.SESSION_COOKIE)
    if token:
        await sessions.end(session, token)
    response = redirect("/")
    response.delete_cookie(sessions.SESSION_COOKIE, path="/", httponly=True, samesite="lax",
                           secure=secure_cookies())
    return response

