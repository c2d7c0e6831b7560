"""The pure-ASGI middleware pieces: HTTP-only dispatch and header replacement on the start message."""

from __future__ import annotations

import asyncio

from starlette.types import Message, Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware, on_response_start, with_headers


class _Marking(HTTPMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, on_response_start(send, lambda m: with_headers(m, [(b"x-mark", b"1")])))


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"X-Mark", b"0"), (b"a", b"b")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _run(scope_type: str) -> list[Message]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    asyncio.run(_Marking(_app)({"type": scope_type}, receive, send))
    return sent


def test_an_http_answer_gets_the_header_in_place_of_its_namesake() -> None:
    start, body = _run("http")
    assert start["headers"] == [(b"a", b"b"), (b"x-mark", b"1")]
    assert body == {"type": "http.response.body", "body": b"ok"}


def test_other_scopes_pass_through_untouched() -> None:
    start, _ = _run("websocket")
    assert start["headers"] == [(b"X-Mark", b"0"), (b"a", b"b")]
