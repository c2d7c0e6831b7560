"""Query models: read in one step by their route, documented as FastAPI documents declared parameters."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from bountyboard.market.schemas import ClaimListQuery, TaskListQuery
from bountyboard.querystrings import QueryModel


def _without_titles(value: Any) -> Any:
    """FastAPI titles a parameter's schema after the parameter; a model's schema titles only some fields."""
    if isinstance(value, dict):
        return {key: _without_titles(item) for key, item in value.items() if key != "title"}
    if isinstance(value, list):
        return [_without_titles(item) for item in value]
    return value


@pytest.mark.parametrize("model", [TaskListQuery, ClaimListQuery])
def test_a_query_model_is_documented_as_fastapi_documents_it_declared(model: type[QueryModel]) -> None:
    app = FastAPI()

    def declared(query: Any) -> None:
        """FastAPI reads and documents the parameters itself."""

    declared.__annotations__["query"] = Annotated[model, Query()]  # the model of this case, not a name to resolve
    app.get("/declared")(declared)

    @app.get("/read", openapi_extra=model.openapi())
    def read() -> None:
        """The route reads them (``model.of``); the document says what it reads."""

    document = app.openapi()
    parameters = {path: document["paths"][path]["get"]["parameters"] for path in ("/declared", "/read")}
    assert _without_titles(parameters["/read"]) == _without_titles(parameters["/declared"])
    for name, definition in model.definitions().items():
        assert _without_titles(document["components"]["schemas"][name]) == _without_titles(definition)


def _request(query: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "query_string": query.encode(), "headers": []})


def test_a_query_model_reads_the_last_of_a_repeated_parameter_and_ignores_unknown_ones() -> None:
    asked = TaskListQuery.of(_request("pageSize=1&pageSize=3&colour=blue&module=arena"))
    assert (asked.page, asked.pageSize, asked.module, asked.status, asked.after) == (1, 3, "arena", None, None)


def test_a_bad_parameter_is_a_validation_error_at_its_place_in_the_query() -> None:
    with pytest.raises(RequestValidationError) as raised:
        TaskListQuery.of(_request("pageSize=0&status=open"))
    assert [error["loc"] for error in raised.value.errors()] == [("query", "pageSize"), ("query", "status")]


def test_a_query_string_is_validated_once_and_a_refused_one_every_time() -> None:
    first = TaskListQuery.of(_request("module=arena&pageSize=7"))
    assert TaskListQuery.of(_request("module=arena&pageSize=7")) is first  # kept, and frozen
    assert ClaimListQuery.of(_request("module=arena&pageSize=7")) is not first  # kept per model
    with pytest.raises(ValidationError):
        first.pageSize = 8  # type: ignore[misc]
    for _ in range(2):
        with pytest.raises(RequestValidationError):
            TaskListQuery.of(_request("pageSize=0"))
