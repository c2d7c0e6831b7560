"""The authorization server's and the protected resource's routes, from the ``mcp`` SDK, on the application.

- ``/.well-known/oauth-authorization-server`` (RFC 8414), ``/register`` (RFC 7591), ``/authorize``, ``/token``
  and ``/revoke`` (RFC 7009): the SDK's handlers over :class:`~bountyboard.oauth.provider.Provider`;
  registrations are rate-limited per client address.
- ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728, the path the RFC derives from ``{base_url}/mcp``)
  and the same document at ``/.well-known/oauth-protected-resource``, for clients that look there.

RFC 8414 wants an https issuer; the SDK allows plain http only on loopback. A deployment whose
``base_url`` is neither gets no OAuth (a warning at start) and /mcp keeps taking ``svc-`` keys.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.routes import (
    REGISTRATION_PATH,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
    validate_issuer_url,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as ASGIScope

from bountyboard.accounts.scopes import BOT_KEY_SCOPES
from bountyboard.config import get_settings
from bountyboard.contract.scopes import Scope
from bountyboard.errors import Problem, send_problem
from bountyboard.oauth.provider import Provider
from bountyboard.ratelimit import RatePolicy, enforce

PROTECTED_RESOURCE_ROOT = "/.well-known/oauth-protected-resource"
# What a token may carry: a bot key's scopes (the operator's role may narrow them on the consent page).
TOKEN_SCOPES = [str(scope) for scope in Scope if scope in BOT_KEY_SCOPES]
log = logging.getLogger("bountyboard")


class _RegistrationLimited:
    """Registration is open to anybody and each one is a row: a cap per client address (429 problem+json)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.policy = RatePolicy("oauth-register-ip", get_settings().oauth_registrations_per_hour, 3600)

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST":
            try:
                await enforce(self.policy, (scope.get("client") or ("unknown",))[0])
            except Problem as problem:
                await send_problem(send, scope, problem.status, problem.code, problem.detail, headers=problem.headers)
                return
        await self.app(scope, receive, send)


def resource_metadata_url(app: FastAPI) -> str | None:
    """Where /mcp's RFC 9728 metadata is, for its 401 challenge; None when OAuth is not served."""
    return getattr(app.state, "oauth_resource_metadata_url", None)


def install(app: FastAPI, resource_path: str) -> None:
    """Serve the authorization server and the metadata of the resource at ``resource_path`` (``/mcp``)."""
    base_url = get_settings().effective_base_url
    # AuthSettings renders the URLs as the SDK's client compares them (a bare origin without its "/").
    urls = AuthSettings(issuer_url=base_url, resource_server_url=base_url + resource_path,
                        validate_token_resource=False)
    assert urls.resource_server_url is not None
    try:
        validate_issuer_url(urls.issuer_url)
    except ValueError as refused:
        log.warning("OAuth for %s is off: %s (base_url %s)", resource_path, refused, base_url)
        return
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=TOKEN_SCOPES, default_scopes=TOKEN_SCOPES)
    routes = create_auth_routes(Provider(), urls.issuer_url, client_registration_options=registration,
                                revocation_options=RevocationOptions(enabled=True))
    for route in routes:
        if route.path == REGISTRATION_PATH:
            route.app = _RegistrationLimited(route.app)
    routes += create_protected_resource_routes(urls.resource_server_url, [urls.issuer_url],
                                               scopes_supported=TOKEN_SCOPES, resource_name="bountyboard")
    # The same document at the root, for clients that look for it without the resource's path.
    root_metadata = ProtectedResourceMetadata(
        resource=urls.resource_server_url, authorization_servers=[urls.issuer_url], scopes_supported=TOKEN_SCOPES,
        resource_name="bountyboard")
    routes.append(Route(PROTECTED_RESOURCE_ROOT, methods=["GET", "OPTIONS"],
                        endpoint=cors_middleware(ProtectedResourceMetadataHandler(root_metadata).handle,
                                                 ["GET", "OPTIONS"])))
    app.router.routes.extend(routes)
    app.state.oauth_resource_metadata_url = str(build_resource_metadata_url(urls.resource_server_url))
