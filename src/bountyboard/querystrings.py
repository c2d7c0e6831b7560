"""Query strings: one check of every one before any route reads it, and query models read in one step.

A NUL character cannot be stored or compared by PostgreSQL while SQLite takes it, so the same
request would answer differently on the two databases; bytes that are not UTF-8 are guessed at by
the parser. Both are refused here, for every route, with the same 422 ``validation_failed`` problem
that a parameter of the wrong type gets.

The lists agents poll read their parameters as one :class:`QueryModel`: FastAPI reads and validates
each declared query parameter on its own, which for a list's four or five cost more per request than
the rest of answering a cached page (docs/performance.md).
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, Self
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from bountyboard.errors import ErrorCode, send_problem

SCHEMA_REF = "#/components/schemas/{model}"


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


class QueryModel(BaseModel):
    """A route's query parameters, validated together by the route itself (``of``) and documented with
    ``openapi_extra=Model.openapi()``; the schemas they refer to join the document's components
    (``meta.openapi``). Unknown parameters are ignored and a repeated one counts once, its last
    value, as FastAPI reads them; errors are the same 422 ``validation_failed`` problem."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    models: ClassVar[list[type[QueryModel]]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        QueryModel.models.append(cls)

    @classmethod
    def of(cls, request: Request) -> Self:
        return cls._parsed(request.scope.get("query_string", b""))

    @classmethod
    @functools.lru_cache(maxsize=512)
    def _parsed(cls, raw: bytes) -> Self:
        """The model of a raw query string, kept: pollers send the same few again and again, and a model
        is frozen (a refused one raises each time)."""
        try:
            return cls.model_validate(dict(QueryParams(raw)))
        except ValidationError as error:
            raise RequestValidationError(
                [{**detail, "loc": ("query", *detail["loc"])} for detail in error.errors(include_url=False)]
            ) from None

    @classmethod
    def openapi(cls) -> dict[str, Any]:
        """The operation's ``parameters``, as FastAPI would write them for declared query parameters."""
        schema = cls.model_json_schema(ref_template=SCHEMA_REF)
        required = set(schema.get("required", ()))
        return {"parameters": [
            {"name": name, "in": "query", "required": name in required, "schema": field,
             **({"description": field["description"]} if "description" in field else {})}
            for name, field in schema["properties"].items()
        ]}

    @classmethod
    def definitions(cls) -> dict[str, Any]:
        """The schemas the parameters refer to (enumerations), by name."""
        definitions: dict[str, Any] = cls.model_json_schema(ref_template=SCHEMA_REF).get("$defs", {})
        return definitions
