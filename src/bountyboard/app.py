"""The ASGI application: every domain's router, the cross-cutting middleware and health checks."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from sqlalchemy import text

from bountyboard import __version__
from bountyboard.accounts.auth import flush_key_uses
from bountyboard.accounts.router import admin_router, identity_router
from bountyboard.accounts.router import router as accounts_router
from bountyboard.benchhub.router import router as benchhub_router
from bountyboard.benchhub.service import seed_registry
from bountyboard.bodylimit import BodyLimitMiddleware
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem, install_handlers, problem_response
from bountyboard.events.delivery.dispatcher import Dispatcher
from bountyboard.events.doorbell import doorbell
from bountyboard.events.router import router as events_router
from bountyboard.events.testdns import install as install_test_resolver
from bountyboard.idempotency import IdempotencyMiddleware
from bountyboard.ledger.router import router as ledger_router
from bountyboard.market.eligibility import use_standing_reader
from bountyboard.market.files.router import router as files_router
from bountyboard.market.router import agent_router, polled_router, publisher_router, review_router
from bountyboard.mcp_server import http as mcp_endpoint
from bountyboard.meta.openapi import install as install_openapi
from bountyboard.meta.router import docs_router, well_known_router
from bountyboard.meta.router import router as meta_router
from bountyboard.querystrings import QueryStringMiddleware
from bountyboard.ratelimit import storage_answers, storage_outages
from bountyboard.reputation.router import router as reputation_router
from bountyboard.reputation.service import standing
from bountyboard.requestlog import RequestIdMiddleware, configure_logging
from bountyboard.site.router import install as install_site
from bountyboard.storage.engine import get_database
from bountyboard.storage.migrations import pending_migrations
from bountyboard.storage.session import RequestSessionMiddleware
from bountyboard.testing.router import router as testing_router
from bountyboard.worker import run_background_jobs

log = logging.getLogger("bountyboard")


def _not_ready(code: ErrorCode, detail: str, **extra: Any) -> JSONResponse:
    return problem_response(None, Problem(503, code, detail, **extra), instance="/readyz")
API_TITLE = "bountyboard agent API"
API_VERSION = "1.0.0"


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    database = get_database()
    try:
        await seed_registry()  # the shipped benchmarks, before any read: a read never writes
    except Exception:  # a database not migrated yet (readyz says so): the worker's periodic job seeds it later
        log.warning("could not bring the shipped benchmark registry into the database", exc_info=True)
    settings = get_settings()
    stop = asyncio.Event()
    background = None
    if settings.run_dispatcher:
        dispatcher = Dispatcher(database, settings, doorbell)
        background = asyncio.create_task(run_background_jobs(stop, dispatcher))
    try:
        async with mcp_endpoint.running(app):
            # Start-up objects (modules, routes, models) live as long as the process: moved out of the
            # collector's generations so full collections stop re-scanning them under load (a
            # 10,000-trial upload spent most of its time there; docs/performance.md, hub section).
            gc.collect()
            gc.freeze()
            yield
    finally:
        stop.set()
        if background is not None:
            await background
        await flush_key_uses()
        await database.dispose()


def create_app() -> FastAPI:
    configure_logging()  # again here: server processes started by uvicorn's --workers do not inherit it
    install_test_resolver(get_settings())  # nothing unless a test deployment names a hosts file
    use_standing_reader(standing)  # eligibility (market) reads the track records (reputation, a layer above)
    app = FastAPI(
        title=API_TITLE,
        version=API_VERSION,
        lifespan=lifespan,
        openapi_url=None,  # served, with /docs, by bountyboard.meta
        docs_url=None,
        redoc_url=None,
    )
    install_handlers(app)

    # Routes are matched in the order they are added: the most polled ones first (health checks,
    # then the agent's), so that they are found without trying every other route before them.
    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> Any:
        try:
            async with get_database().engine.connect() as connection:
                rows = await connection.execute(text("SELECT version_num FROM alembic_version"))
                applied = {row[0] for row in rows}
        except Exception:  # any database failure means "not ready", never a 500
            log.warning("readiness check: database unreachable", exc_info=True)
            return _not_ready(ErrorCode.DATABASE_UNREACHABLE, "The database is not reachable.")
        pending = pending_migrations(applied)
        if pending:
            return _not_ready(ErrorCode.MIGRATIONS_PENDING, f"Migrations not applied: {', '.join(sorted(pending))}.")
        # How the rate limits fared while their counters did not answer (docs/security.md), since the start.
        outages = {"rateLimitStorage": storage_outages.counts()}
        if get_settings().redis_url and not await storage_answers():
            return _not_ready(ErrorCode.REDIS_UNREACHABLE, "Redis (BOUNTYBOARD_REDIS_URL) does not answer.", **outages)
        return JSONResponse({"status": "ready", "database": get_database().dialect, **outages})

    # The task list's route joins the app's own table rather than an included router's, which FastAPI
    # reaches through two more layers (in process, 15 us of a cached page's 265: docs/performance.md).
    app.router.routes.extend(polled_router.routes)
    app.include_router(agent_router)
    app.include_router(identity_router)
    app.include_router(accounts_router)
    app.include_router(admin_router)
    app.include_router(publisher_router)
    app.include_router(review_router)
    app.include_router(reputation_router)
    app.include_router(files_router)
    app.include_router(ledger_router)
    app.include_router(events_router)
    app.include_router(meta_router)
    app.include_router(docs_router)
    app.include_router(well_known_router)
    app.include_router(benchhub_router)
    if get_settings().enable_test_clock:  # test deployments only: move the clock, hold, emit
        app.include_router(testing_router)
    mcp_endpoint.install(app)  # /mcp: the agent loop over the Model Context Protocol
    install_openapi(app)
    # Each one added wraps those before it: the request id wraps everything, including idempotent replays.
    app.add_middleware(RequestSessionMiddleware)  # innermost: the session ends as soon as the answer is sent
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(BodyLimitMiddleware)  # outside anything that reads a body
    app.add_middleware(QueryStringMiddleware)
    app.add_middleware(RequestIdMiddleware)
    install_site(app)  # after the other middleware, so its security headers wrap every answer
    return app

