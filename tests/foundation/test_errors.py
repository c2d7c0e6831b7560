"""Every error is RFC 9457 problem+json with a request id, FastAPI's own 404/405/422 included, and
no operation answers garbage with a 500 (driven by the live OpenAPI document, so new routes are
covered too)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from tests.support.api import PROBLEM, Account, Admin, client, expect_problem
from tests.support.openapi import example_body, fetch, operations
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process


def test_frameworks_own_errors_are_problems(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    missing = expect_problem(httpx.get(server.base_url + "/v1/no/such/route"), 404)
    assert missing["code"] == "not_found" and missing["instance"] == "/v1/no/such/route"

    wrong_method = operator.http.put("/v1/agent/bots", json={})
    body = expect_problem(wrong_method, 405)
    assert body["code"] == "method_not_allowed"
    assert "GET" in wrong_method.headers["allow"]

    invalid = expect_problem(operator.http.post("/v1/agent/bots", json={"name": 7, "maxActiveClaims": "many"}), 422)
    assert invalid["code"] == "validation_failed"
    assert {error["field"] for error in invalid["errors"]} == {"name", "maxActiveClaims"}

    not_json = operator.http.post("/v1/agent/bots", content=b'{"name": ', headers={"content-type": "application/json"})
    assert expect_problem(not_json, 422)["code"] == "validation_failed"
    unknown_field = operator.http.post("/v1/agent/bots", json={"name": "ok", "colour": "red"})
    assert "colour" in {error["field"] for error in expect_problem(unknown_field, 422)["errors"]}
    assert operator.http.get("/v1/agent/bots").json()["data"] == []


def test_request_id_in_and_out(server: LiveServer) -> None:
    given = httpx.get(server.base_url + "/api/auth/me", headers={"X-Request-Id": "trace-42.a:b"})
    assert given.headers["x-request-id"] == "trace-42.a:b"
    assert given.json()["requestId"] == "trace-42.a:b"
    made = httpx.get(server.base_url + "/healthz")
    assert re.fullmatch(r"req_[0-9a-z]{26}", made.headers["x-request-id"])
    # A caller's id that is not a sane token is replaced, not echoed.
    odd = httpx.get(server.base_url + "/healthz", headers={"X-Request-Id": "x" * 500})
    assert re.fullmatch(r"req_[0-9a-z]{26}", odd.headers["x-request-id"])
    assert httpx.get(server.base_url + "/healthz").headers["x-request-id"] != made.headers["x-request-id"]


# Garbage: values that break naive code (NUL characters, numbers beyond 64 bits, huge strings,
# wrong types, path tricks).
PATH_GARBAGE = ["%00", "a" * 2000, "%F0%9F%98%80", "-1", "..%2F..%2Fetc", "99999999999999999999999999", "%25s%25n"]
QUERY_GARBAGE = ["", "-1", "0", "x" * 2000, "\x00", "99999999999999999999999999", "1e309", "NaN", "[]", "%"]


def _mutate(value: Any, leaf: Any) -> Any:
    if isinstance(value, dict):
        return {key: _mutate(item, leaf) for key, item in value.items()}
    if isinstance(value, list):
        return [_mutate(item, leaf) for item in value] or [leaf]
    return leaf


def _bodies(operation: dict[str, Any], document: dict[str, Any]) -> list[bytes]:
    plausible = example_body(operation, document)
    if plausible is None:
        return [b"{", b"null"]
    dumped = [json.dumps(_mutate(plausible, leaf)) for leaf in ("\u0000nul", 2**70, 1e308, -(2**63) - 1, [[{}]],
                                                                 "x" * 20000, {"$gt": ""})]
    raw = [b"{", b"[]", b"null", b'"text"', b"{}", b'{"a":' * 200 + b"1" + b"}" * 200, b"\xff\xfe"]
    return raw + [text.encode() for text in dumped]


@pytest.fixture(scope="module")
def everything(quiet_admin: Admin) -> Account:
    return quiet_admin.account("admin")  # every scope, so garbage reaches each operation's own code


def test_no_operation_answers_garbage_with_a_server_error(quiet_server: LiveServer, everything: Account) -> None:
    document = fetch(quiet_server.base_url)
    failures: list[str] = []
    sent = 0
    with client(quiet_server.base_url, everything.key) as http:
        for method, path, operation in operations(document):
            requests: list[tuple[str, dict[str, Any]]] = []
            if "{" in path:
                requests += [(re.sub(r"\{[^}]+\}", garbage, path), {}) for garbage in PATH_GARBAGE]
            concrete = re.sub(r"\{[^}]+\}", "zz_01jd2k3m4n5p6q7r8s9t0v1w2x", path)
            names = [p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"]
            if names:
                requests += [(concrete, {"params": {name: garbage for name in names}}) for garbage in QUERY_GARBAGE]
            if method in {"POST", "PUT", "PATCH"}:
                requests += [(concrete, {"content": body, "headers": {"content-type": "application/json"}})
                             for body in _bodies(operation, document)]
                requests.append((concrete, {"content": b"name=x", "headers": {"content-type": "text/plain"}}))
            for url, extra in requests:
                response = http.request(method, url, **extra)
                sent += 1
                if response.status_code >= 500 or (response.status_code >= 400
                                                   and response.headers.get("content-type") != PROBLEM):
                    failures.append(f"{method} {url[:80]} {str(extra)[:120]} -> {response.status_code} "
                                    f"{response.text[:200]}")
    assert sent > 100
    assert not failures, "\n".join(failures[:30])
