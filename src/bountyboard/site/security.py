"""Security headers on every response, as a small ASGI middleware.

The site's pages load scripts and styles only from ``/static`` (no inline script, no ``on*``
attributes), so the policy can forbid inline code outright. Images from https hosts are allowed
because reviewers look at image artifacts where they live. FastAPI's interactive ``/docs`` page
needs its CDN assets and one inline bootstrap script, so it alone gets a wider policy.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware, add_response_headers
from bountyboard.config import get_settings
from bountyboard.market.files.downloads import FILE_PATH_PREFIX, FILE_POLICY
from bountyboard.oauth.provider import CONSENT_PATH

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' https://cdn.jsdelivr.net; img-src 'self' https: data:; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
_DOCS_PATHS = ("/docs", "/docs/oauth2-redirect")
# The OAuth consent form's answer redirects to the client's redirect URI (any origin, or a custom scheme), which
# browsers check against form-action: that page alone leaves form-action out (its own form posts to 'self').
_CONSENT_POLICY = CONTENT_SECURITY_POLICY.replace(" form-action 'self';", "")

_COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


def _policy(path: str) -> str:
    if path in _DOCS_PATHS:
        return _DOCS_POLICY
    if path == CONSENT_PATH:
        return _CONSENT_POLICY
    if path.startswith(FILE_PATH_PREFIX):  # uploaded files: sandboxed, so nothing in them runs here
        return FILE_POLICY
    return CONTENT_SECURITY_POLICY


def _transport_security(scope: Scope) -> list[tuple[bytes, bytes]]:
    """HSTS when the answer travels over HTTPS: the request came over TLS (directly, or through a
    trusted proxy's X-Forwarded-Proto) or the service's public URL is https. Over plain HTTP
    browsers ignore it, so a local deployment is never pinned to HTTPS by accident."""
    settings = get_settings()
    over_tls = scope.get("scheme") == "https" or settings.effective_base_url.startswith("https://")
    if not over_tls or settings.hsts_max_age_seconds == 0:
        return []
    return [(b"strict-transport-security", f"max-age={settings.hsts_max_age_seconds}".encode())]


class SecurityHeadersMiddleware(HTTPMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        policy = _policy(scope["path"]).encode()
        add_response_headers(scope, [*_COMMON, (b"content-security-policy", policy), *_transport_security(scope)])
        await self.app(scope, receive, send)
