"""A cap on request bodies, enforced while they stream in, before anything reads them.

A declared ``Content-Length`` over the route's limit is refused at once, without reading a byte of
the body; a chunked body is counted as it arrives and refused as soon as it passes the limit. Either
way the answer is a 413 ``payload_too_large`` problem, and it comes before authentication, because
FastAPI reads a body before it runs the dependencies that check the key.

Run uploads (``POST /v1/runs``) carry whole trial lists, so they get their own, larger limit.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import Message, Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware, on_response_start
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, send_problem
from bountyboard.mcp_server.http import MCP_PATH

# Room for the JSON-RPC envelope and the other arguments around an MCP call's base64 file.
_MCP_CALL_OVERHEAD = 64 * 1024


class BodyTooLarge(HTTPException):
    """Raised inside the application's ``receive`` once a streamed body passes the limit: FastAPI lets
    an HTTPException from reading the body through, and its handler answers the 413 problem."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _detail(limit), headers={"Connection": "close"})


def _detail(limit: int) -> str:
    return f"The request body is larger than this route accepts ({limit} bytes)."


def body_limit(method: str, path: str) -> int:
    """The most bytes a request body may have on this route (settings ``max_body_bytes``,
    ``max_run_upload_bytes``, ``upload_max_file_bytes``, ``mcp_upload_max_bytes`` and
    ``verifier_archive_max_bytes``)."""
    settings = get_settings()
    if method == "POST" and path.rstrip("/") == "/v1/runs":
        return settings.max_run_upload_bytes
    if method == "POST" and path == MCP_PATH:  # upload_file carries a file, base64, in the call
        return max(settings.max_body_bytes, settings.mcp_upload_max_bytes * 4 // 3 + _MCP_CALL_OVERHEAD)
    if method == "PUT" and path.startswith("/v1/uploads/"):  # a file's bytes (bountyboard.market.files)
        return settings.upload_max_file_bytes
    if method == "PUT" and path.startswith("/v1/tasks/") and path.endswith("/verifier-archive"):
        return settings.verifier_archive_max_bytes
    return settings.max_body_bytes


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimitMiddleware(HTTPMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = body_limit(scope["method"], scope["path"])
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await _refuse(send, scope, limit)
            return

        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        def mark_started(message: Message) -> Message:
            nonlocal started
            started = True
            return message

        try:
            await self.app(scope, counting_receive, on_response_start(send, mark_started))
        except BodyTooLarge:
            # Raised outside FastAPI's handlers (a middleware that reads the body, such as idempotency).
            if not started:
                await _refuse(send, scope, limit)


async def _refuse(send: Send, scope: Scope, limit: int) -> None:
    # Closing the connection spares the server from draining a body it refused.
    await send_problem(send, scope, 413, ErrorCode.PAYLOAD_TOO_LARGE, _detail(limit), headers={"Connection": "close"})
