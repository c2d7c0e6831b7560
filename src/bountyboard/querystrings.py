"""One check of every query string, before any route reads it.

A NUL character cannot be stored or compared by PostgreSQL while SQLite takes it, so the same
request would answer differently on the two databases; bytes that are not UTF-8 are guessed at by
the parser. Both are refused here, for every route, with the same 422 ``validation_failed`` problem
that a parameter of the wrong type gets.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from bountyboard.errors import ErrorCode, send_problem


def query_errors(raw: bytes) -> list[dict[str, str]]:
    """What is wrong with a raw query string, as field errors (none when it is fine)."""
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return [{"field": "query", "message": "the query string is not valid UTF-8"}]
    return [{"field": name.replace("\x00", "\\0"), "message": "contains a NUL character"}
            for name, value in pairs if "\x00" in name or "\x00" in value]


class QueryStringMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (errors := query_errors(scope.get("query_string", b""))):
            summary = "; ".join(f"{error['field']}: {error['message']}" for error in errors[:5])
            await send_problem(send, scope, 422, ErrorCode.VALIDATION_FAILED, f"The request is not valid: {summary}",
                               errors=errors)
            return
        await self.app(scope, receive, send)
