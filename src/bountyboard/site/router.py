"""The site: every page router, the static files and the security headers, installed on the app."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from bountyboard.site.pages import (
    account,
    benchhub,
    bots,
    oauth,
    profile,
    public,
    publish,
    publishers,
    reputation,
    review,
    webhooks,
)
from bountyboard.site.render import STATIC_DIR
from bountyboard.site.security import SecurityHeadersMiddleware

router = APIRouter(include_in_schema=False)
for _pages in (public, account, profile, bots, reputation, publishers, webhooks, publish, review, benchhub, oauth):
    router.include_router(_pages.router)


def install(app: FastAPI) -> None:
    """Pages, ``/static`` and the security-headers middleware (which wraps every answer, API included)."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(SecurityHeadersMiddleware)
