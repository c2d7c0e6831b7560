"""The contract and the server agree: what the OpenAPI documents show, the server accepts.

Walks both documents on a private server (some examples move its clock): every request-body
example passes the server's validation, every value an enumerated query parameter lists is
accepted, the submission example is taken by a real claim, and a NUL in any free-text query
parameter gets the same 422 problem on SQLite and PostgreSQL. HSTS is sent over HTTPS only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.market.support import Market, claim
from tests.security.conftest import private_server
from tests.support.api import Admin, expect_problem
from tests.support.openapi import example, operations
from tests.support.server import LiveServer, backends

DOCUMENTS = ("/v1/meta/openapi.json", "/v1/meta/benchhub-openapi.json")
PLACEHOLDER_ID = "x_01jd2k3m4n5p6q7r8s9t0v1w2x"


@pytest.fixture(scope="module", params=backends())
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with private_server(request.param, tmp_path_factory.mktemp(f"contract-{request.param}"),
                        {"BOUNTYBOARD_TRUSTED_PROXIES": "127.0.0.1"}) as server:
        yield server


@pytest.fixture(scope="module")
def admin(live: LiveServer) -> Admin:
    return Admin.of(live)


def documented(live: LiveServer) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(METHOD, path, operation, component schemas) of both documents."""
    for path in DOCUMENTS:
        document = httpx.get(live.base_url + path, timeout=30).json()
        for method, route, operation in operations(document):
            yield method, route, operation, document["components"]["schemas"]


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", PLACEHOLDER_ID, path)


def query_parameters(operation: dict[str, Any],
                     components: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(name, schema without its null branch and references resolved, required) of each query parameter."""
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "query":
            schema = parameter.get("schema", {})
            branches = [branch for branch in schema.get("anyOf", [schema]) if branch.get("type") != "null"]
            branch = branches[0] if branches else {}
            if "$ref" in branch:
                branch = components[branch["$ref"].rsplit("/", 1)[1]]
            yield parameter["name"], branch, bool(parameter.get("required"))


def required_query(operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    return {name: example(schema, components)
            for name, schema, required in query_parameters(operation, components) if required}


def test_every_request_body_example_passes_the_servers_validation(live: LiveServer, admin: Admin) -> None:
    checked, refused = 0, []
    for method, path, operation, components in documented(live):
        media = (operation.get("requestBody") or {}).get("content", {}).get("application/json", {})
        if "example" in media:
            answer = admin.http.request(method, concrete(path), json=media["example"],
                                        params=required_query(operation, components))
            checked += 1
            if answer.status_code == 422 and answer.json().get("code") == "validation_failed":
                refused.append(f"{method} {path}: {answer.json()['detail']}")
    assert checked >= 10
    assert not refused, refused


def test_every_listed_query_value_is_accepted(live: LiveServer, admin: Admin) -> None:
    checked, refused = 0, []
    for method, path, operation, components in documented(live):
        if method != "GET":
            continue
        for name, schema, _ in query_parameters(operation, components):
            for value in schema.get("enum", []):
                answer = admin.http.get(concrete(path), params={**required_query(operation, components), name: value})
                checked += 1
                if answer.status_code == 422:
                    refused.append(f"GET {path}?{name}={value}: {answer.json()['detail']}")
    assert checked >= 10
    assert not refused, refused


def test_the_submission_example_is_accepted_by_a_real_claim(live: LiveServer, admin: Admin) -> None:
    document = httpx.get(live.base_url + DOCUMENTS[0], timeout=30).json()
    body = document["paths"]["/v1/agent/claims/{id}/submit"]["post"]["requestBody"]["content"]["application/json"]
    market = Market(admin)
    task = market.task(market.publisher(funds=100))
    operator = market.operator()
    claim_id = claim(operator, task["id"])
    answer = operator.http.post(f"/v1/agent/claims/{claim_id}/submit", json=body["example"])
    assert answer.status_code == 200, answer.text


def test_a_nul_in_any_free_text_query_parameter_is_the_same_422(live: LiveServer, admin: Admin) -> None:
    checked = 0
    for method, path, operation, components in documented(live):
        if method != "GET":
            continue
        for name, schema, _ in query_parameters(operation, components):
            if schema.get("type") != "string" or "enum" in schema or "pattern" in schema:
                continue
            answer = admin.http.get(concrete(path), params={**required_query(operation, components), name: "a\x00b"})
            checked += 1
            problem = expect_problem(answer, 422, "validation_failed")
            assert problem["errors"] == [{"field": name, "message": "contains a NUL character"}]
    assert checked >= 3


def test_hsts_over_https_only(live: LiveServer) -> None:
    plain = httpx.get(live.base_url + "/healthz", timeout=30)
    assert "strict-transport-security" not in plain.headers
    # A trusted TLS-terminating proxy in front (the setting names 127.0.0.1) says the client used HTTPS.
    secure = httpx.get(live.base_url + "/v1/agent/tasks", headers={"X-Forwarded-Proto": "https"}, timeout=30)
    assert secure.headers["strict-transport-security"] == "max-age=31536000"
