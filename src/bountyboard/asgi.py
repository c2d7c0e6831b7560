"""What the pure-ASGI middlewares share: HTTP-only dispatch and editing the response's start message.

They are pure ASGI rather than Starlette's ``BaseHTTPMiddleware`` so that streamed bodies pass
through untouched and an error keeps its request id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_RESPONSE_HEADERS = "bountyboard.response_headers"


class HTTPMiddleware:
    """A middleware that acts on HTTP requests; lifespan and websocket scopes pass through untouched.

    Subclasses implement :meth:`handle`, which runs only for ``http`` scopes.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


def on_response_start(send: Send, edit: Callable[[Message], Message]) -> Send:
    """``send``, with ``edit`` applied to the ``http.response.start`` message (status and headers)."""

    async def edited_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = edit(message)
        await send(message)

    return edited_send


def add_response_headers(scope: Scope, headers: Iterable[tuple[bytes, bytes]]) -> None:
    """Headers for this request's answer, whichever layer or route gives it: the request-id layer
    (``requestlog.RequestIdMiddleware``), which every answer leaves through, sends them. One edit of the
    answer's start instead of one wrapper of ``send`` per layer (each costs every request)."""
    scope.setdefault(_RESPONSE_HEADERS, []).extend(headers)


def response_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """What :func:`add_response_headers` collected for this request."""
    headers: list[tuple[bytes, bytes]] = scope.get(_RESPONSE_HEADERS, [])
    return headers


def with_headers(message: Message, added: list[tuple[bytes, bytes]]) -> Message:
    """The start message with the ``added`` headers, replacing any it had of the same names."""
    names = {name.lower() for name, _ in added}
    kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in names]
    return {**message, "headers": kept + added}
