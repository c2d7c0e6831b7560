"""``KeyOnlyRoute`` checks the caller with the very check and scopes its endpoint's annotation names, and refuses,
at start, an endpoint that would need anything else resolved."""

from __future__ import annotations

from typing import Annotated

import pytest
from fastapi import APIRouter, Depends, Request, Response

from bountyboard.accounts.auth import Actor, ApiKeyBearer, KeyOnlyRoute, _key_check_of, authenticated, require
from bountyboard.contract.scopes import Scope


async def _polled(request: Request, actor: Annotated[Actor, require(Scope.TASKS_READ, Scope.CLAIMS_READ)]) -> Response:
    return Response()


async def _with_a_parameter(request: Request, actor: Annotated[Actor, require(Scope.TASKS_READ)],
                            page: int = 1) -> Response:
    return Response()


def _someone() -> str:
    return "someone"


async def _without_a_key(request: Request, caller: Annotated[str, Depends(_someone)]) -> Response:
    return Response()


def test_the_check_and_scopes_are_those_the_annotation_names() -> None:
    check, scopes = _key_check_of(_polled)
    assert isinstance(check, ApiKeyBearer) and check is authenticated
    assert scopes.scopes == [str(Scope.TASKS_READ), str(Scope.CLAIMS_READ)]


@pytest.mark.parametrize("endpoint", [_with_a_parameter, _without_a_key])
def test_an_endpoint_that_needs_more_is_refused_when_the_route_is_added(endpoint: object) -> None:
    router = APIRouter()
    with pytest.raises(TypeError, match="KeyOnlyRoute endpoint takes"):
        router.add_api_route("/x", endpoint, methods=["GET"], route_class_override=KeyOnlyRoute)  # type: ignore[arg-type]
