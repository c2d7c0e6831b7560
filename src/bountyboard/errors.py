"""The one place that shapes errors: RFC 9457 ``application/problem+json``.

Services raise :class:`Problem` (or one of its subclasses); FastAPI's own errors are converted by
the handlers installed with :func:`install_handlers`; unexpected exceptions are logged and answered
as a 500 problem by :class:`bountyboard.requestlog.RequestIdMiddleware`, inside the request id.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Scope, Send

from bountyboard.error_codes import ErrorCode

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://bountyboard.dev/problems/"

request_id_var: ContextVar[str] = ContextVar("request_id", default="-")


class FieldError(BaseModel):
    field: str
    message: str


class ProblemDetail(BaseModel):
    """The body of every error response."""

    type: str = Field(examples=[PROBLEM_TYPE_BASE + "insufficient_scope"])
    title: str = Field(examples=["Forbidden"])
    status: int = Field(examples=[403])
    detail: str = Field(examples=["This operation needs the scope tasks:claim."])
    instance: str = Field(examples=["/v1/agent/tasks/task_01j.../claim"])
    code: str = Field(examples=["insufficient_scope"])
    requestId: str
    errors: list[FieldError] | None = None
    requiredScopes: list[str] | None = None


class Problem(Exception):
    """An error answered to the client. ``code`` comes from the catalogue; ``extra`` adds fields."""

    def __init__(
        self,
        status: int,
        code: ErrorCode,
        detail: str,
        *,
        title: str | None = None,
        errors: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or HTTPStatus(status).phrase
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra
        self.keep_writes = False

    def keeping_writes(self) -> Problem:
        """This refusal keeps what the request wrote before it: the unit of work commits those writes before
        the problem is answered (``storage.unit_of_work.transaction``), as a claim found lapsed stays expired."""
        self.keep_writes = True
        return self


def not_found(what: str, identifier: str) -> Problem:
    return Problem(404, ErrorCode.NOT_FOUND, f"No {what} with id {identifier!r} exists for this caller.")


def conflict(code: ErrorCode, detail: str, **extra: Any) -> Problem:
    return Problem(409, code, detail, **extra)


def invalid(detail: str, errors: list[dict[str, str]] | None = None,
            code: ErrorCode = ErrorCode.INVALID_REQUEST) -> Problem:
    return Problem(422, code, detail, errors=errors)


def problem_body(
    status: int,
    code: ErrorCode,
    detail: str,
    instance: str,
    *,
    title: str | None = None,
    errors: list[dict[str, str]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code,
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "instance": instance,
        "code": code,
        "requestId": request_id_var.get(),
    }
    if errors:
        body["errors"] = errors
    body.update({key: value for key, value in extra.items() if value is not None})
    return body


def problem_response(request: Request | None, problem: Problem, *, instance: str | None = None) -> JSONResponse:
    """The answer to ``problem``; ``instance`` defaults to the request's path."""
    if instance is None:
        instance = request.url.path if request else ""
    body = problem_body(problem.status, problem.code, problem.detail, instance, title=problem.title,
                        errors=problem.errors, **problem.extra)
    return JSONResponse(body, status_code=problem.status, headers=problem.headers, media_type=PROBLEM_MEDIA_TYPE)


async def send_problem(send: Send, scope: Scope, status: int, code: ErrorCode, detail: str, *,
                       headers: dict[str, str] | None = None, **extra: Any) -> None:
    """Answer a problem from an ASGI middleware (outside FastAPI's exception handlers)."""
    body = json.dumps(problem_body(status, code, detail, scope.get("path", ""), **extra)).encode()
    raw_headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    raw_headers += [(name.lower().encode("latin-1"), value.encode("latin-1"))
                    for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


def is_bad_value(exc: BaseException) -> bool:
    """Whether an exception means "the input cannot be stored", not "the server is broken".

    PostgreSQL refuses NUL characters and out-of-range numbers (SQLSTATE class 22, or asyncpg's
    own check of a query argument); SQLite's driver raises OverflowError for integers beyond 64 bits.
    """
    if isinstance(exc, OverflowError):
        return True
    if isinstance(exc, DBAPIError):
        cause = exc.orig.__cause__ if exc.orig is not None else None
        sqlstate = str(getattr(exc.orig, "sqlstate", "") or getattr(cause, "sqlstate", "") or "")
        return sqlstate.startswith("22") or "invalid input for query argument" in str(exc.orig)
    return False


def _field_name(location: tuple[Any, ...]) -> str:
    parts = [str(part) for part in location if part not in ("body", "query", "path", "header")]
    return ".".join(parts) or (str(location[0]) if location else "request")


_HTTP_CODES = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHENTICATED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    406: ErrorCode.NOT_ACCEPTABLE,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    429: ErrorCode.RATE_LIMITED,
}


def _allowed_methods(request: Request) -> list[str]:
    return [method for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
            if any(route.matches({**request.scope, "method": method})[0] is Match.FULL
                   for route in request.app.router.routes)]


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"field": _field_name(tuple(e.get("loc", ()))), "message": str(e.get("msg", ""))}
                  for e in exc.errors()]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        return problem_response(request, Problem(422, ErrorCode.VALIDATION_FAILED,
                                                 f"The request is not valid: {summary}", errors=errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, ErrorCode.HTTP_ERROR)
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"No route matches {request.method} {request.url.path}."
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}."
            # Starlette names only the first matching route's methods; list every route's of the path.
            headers = {**(headers or {}), "Allow": ", ".join(_allowed_methods(request))}
        return problem_response(request, Problem(exc.status_code, code, detail, headers=headers))

    async def _bad_value(request: Request, exc: Exception) -> JSONResponse:
        if not is_bad_value(exc):
            raise exc  # an unexpected error: answered as a 500 by the request-id middleware
        return problem_response(request, Problem(
            422, ErrorCode.UNSTORABLE_VALUE,
            "The request holds a value that cannot be stored (a NUL character or a number out of range)."))

    app.add_exception_handler(DBAPIError, _bad_value)
    app.add_exception_handler(OverflowError, _bad_value)


# OpenAPI: the problem responses every operation may answer.
def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        400: "Bad request", 401: "Missing, malformed, expired or revoked API key",
        403: "The key lacks a required scope", 404: "Not found", 409: "Conflict with the current state",
        422: "Invalid input", 429: "Rate limit exceeded",
        503: "A rate limit cannot be counted now (its counters do not answer); retry after Retry-After seconds",
    }
    return {
        status: {
            "description": descriptions.get(status, HTTPStatus(status).phrase),
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetail"}}},
        }
        for status in statuses
    }
