"""The streamable-HTTP MCP endpoint at ``{base_url}/mcp``, served by the application itself.

Every request must carry a valid bearer key (checked here, before the MCP session sees it): an API key, or an
OAuth access token (:mod:`bountyboard.oauth`, which issues API keys); a 401's challenge names the RFC 9728
metadata (``resource_metadata``), where an MCP client finds the authorization server. Each
tool call then runs the REST operation in-process with that same key, through the whole
middleware stack, so scopes, idempotency, rate limits and errors are the REST API's own.
Stateless (no session kept between requests), so any replica can answer any request.

Only POST is served: the server never sends messages of its own, so the GET stream of the transport
would stay open and silent, and without sessions there is nothing for DELETE to end; both are answered
405 (which the transport allows), so no request holds a connection past its answer. A request from a
browser page (one with an ``Origin`` header) is refused unless it comes from the service's own origin
or one allowed by ``BOUNTYBOARD_MCP_ALLOWED_ORIGINS``, as the transport requires of servers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from urllib.parse import urlsplit

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
from bountyboard.config import Settings, get_settings
from bountyboard.errors import ErrorCode, Problem, send_problem
from bountyboard.mcp_server.server import build_server
from bountyboard.oauth import routes as oauth
from bountyboard.storage.engine import get_database

MCP_PATH = "/mcp"
# Headers of the MCP request that the in-process REST call carries on.
_FORWARDED = ("authorization", "x-forwarded-for", "x-request-id")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """The origin of a URL as browsers send it in ``Origin`` (``scheme://host[:port]``, lower case, the scheme's
    default port left out); None when it has none (``null``, garbage)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    shown_host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown_host}" + ("" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}")


def allowed_origins(settings: Settings) -> frozenset[str]:
    """The service's own origin (its base URL's) and those the setting adds."""
    listed = [settings.effective_base_url, *settings.mcp_allowed_origins.split(",")]
    return frozenset(origin for url in listed if url.strip() and (origin := origin_of(url)) is not None)


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


class _Guarded:
    """The session manager behind an Origin check (403) and a bearer-key check (401 problem+json, as on every
    REST operation, its challenge naming the resource metadata when OAuth is served)."""

    def __init__(self, sessions: StreamableHTTPSessionManager, origins: frozenset[str],
                 resource_metadata: str | None) -> None:
        self.sessions = sessions
        self.origins = origins
        self.resource_metadata = resource_metadata

    def _challenge(self, challenge: str) -> str:
        return f'{challenge}, resource_metadata="{self.resource_metadata}"' if self.resource_metadata else challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Request(scope).headers
        # Browsers send Origin with every POST; a request without one is not a web page's (MCP clients, scripts).
        origin = headers.get("origin")
        if origin is not None and origin_of(origin) not in self.origins:
            await send_problem(send, scope, 403, ErrorCode.ORIGIN_NOT_ALLOWED,
                               f"Requests from the origin {origin[:200]!r} are not allowed on the MCP endpoint.")
            return
        authorization = headers.get("authorization")
        if not authorization:
            await send_problem(send, scope, 401, ErrorCode.UNAUTHENTICATED,
                               "The MCP endpoint needs an API key or an OAuth access token: "
                               "send Authorization: Bearer ...",
                               headers={"WWW-Authenticate": self._challenge('Bearer realm="bountyboard"')})
            return
        try:
            async with get_database().sessionmaker() as session:
                await authenticate_header(session, authorization)
        except Problem as problem:
            answered = dict(problem.headers or {})
            if "WWW-Authenticate" in answered:
                answered["WWW-Authenticate"] = self._challenge(answered["WWW-Authenticate"])
            await send_problem(send, scope, problem.status, problem.code, problem.detail, headers=answered)
            return
        await self.sessions.handle_request(scope, receive, send)


def install(app: FastAPI) -> None:
    """Route ``/mcp`` to the MCP server, and OAuth for it; :func:`running` must wrap the application's lifespan."""
    oauth.install(app, MCP_PATH)
    server = build_server(partial(_in_process, app))
    # The SDK's own Host and Origin checks answer plain text and would refuse the service's names behind a
    # proxy; _Guarded checks Origin instead, answering problem+json.
    server.streamable_http_app(stateless_http=True, json_response=True,
                               transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.state.mcp_sessions = server.session_manager
    guarded = _Guarded(server.session_manager, allowed_origins(get_settings()), oauth.resource_metadata_url(app))
    app.router.routes.append(Route(MCP_PATH, endpoint=guarded, methods=["POST"], include_in_schema=False))


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    async with app.state.mcp_sessions.run():
        yield
