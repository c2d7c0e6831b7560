"""The streamable-HTTP MCP endpoint at ``{base_url}/mcp``, served by the application itself.

Every request must carry a valid bearer key (checked here, before the MCP session sees it); each
tool call then runs the REST operation in-process with that same key, through the whole
middleware stack, so scopes, idempotency, rate limits and errors are the REST API's own.
Stateless (no session kept between requests), so any replica can answer any request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
from fastapi import FastAPI
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bountyboard.accounts.auth import authenticate_header
from bountyboard.client import AsyncClient
from bountyboard.client.state import StateFile
from bountyboard.config import get_settings
from bountyboard.db import get_database
from bountyboard.errors import ErrorCode, Problem, send_problem
from bountyboard.mcp_server.server import build_server

MCP_PATH = "/mcp"
# Headers of the MCP request that the in-process REST call carries on.
_FORWARDED = ("authorization", "x-forwarded-for", "x-request-id")


@asynccontextmanager
async def _in_process(app: FastAPI, ctx: Context | None) -> AsyncIterator[AsyncClient]:
    request = ctx.request_context.request if ctx is not None else None
    headers: dict[str, str] = {}
    peer = ("127.0.0.1", 0)
    if isinstance(request, Request):
        headers = {name: value for name in _FORWARDED if (value := request.headers.get(name))}
        if request.client:
            peer = (request.client.host, request.client.port)
    transport = httpx.ASGITransport(app=app, client=peer)
    # No retries: the MCP caller sees 429/5xx at once and decides; it holds no state here.
    async with AsyncClient(get_settings().effective_base_url, None, state=StateFile(None), check_scopes=False,
                           max_retries=0, http_transport=transport, headers=headers) as client:
        yield client


class _Authenticated:
    """The session manager behind a bearer-key check (401 problem+json, as on every REST operation)."""

    def __init__(self, sessions: StreamableHTTPSessionManager) -> None:
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        authorization = Request(scope).headers.get("authorization")
        if not authorization:
            await send_problem(send, scope, 401, ErrorCode.UNAUTHENTICATED,
                               "The MCP endpoint needs an API key: send Authorization: Bearer svc-...",
                               headers={"WWW-Authenticate": 'Bearer realm="bountyboard"'})
            return
        try:
            async with get_database().sessionmaker() as session:
                await authenticate_header(session, authorization)
        except Problem as problem:
            await send_problem(send, scope, problem.status, problem.code, problem.detail, headers=problem.headers)
            return
        await self.sessions.handle_request(scope, receive, send)


def install(app: FastAPI) -> None:
    """Route ``/mcp`` to the MCP server; :func:`running` must wrap the application's lifespan."""
    server = build_server(partial(_in_process, app))
    # DNS-rebinding protection guards servers that trust the browser's origin; this one trusts only
    # the bearer key, which a rebound page cannot send.
    server.streamable_http_app(stateless_http=True, json_response=True,
                               transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.state.mcp_sessions = server.session_manager
    app.router.routes.append(Route(MCP_PATH, endpoint=_Authenticated(server.session_manager),
                                   methods=["GET", "POST", "DELETE"], include_in_schema=False))


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    async with app.state.mcp_sessions.run():
        yield
