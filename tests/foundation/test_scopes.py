"""Scopes, driven by the route table: the live server's own OpenAPI document lists every operation
and the scopes it requires, so a route added later is covered without touching this file.

For every scope an operation requires, a key holding every other scope is refused with 403
``insufficient_scope`` naming it, and the whole database is unchanged afterwards.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.api import ALL_SCOPES, Account, Admin, client
from tests.support.db import table_rows
from tests.support.openapi import bearer_scopes, example_body, fetch, operations
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

# Public by design (DESIGN.md section 5): the machine-readable companions and benchmark reads.
PUBLIC_PREFIXES = ("/v1/meta/", "/v1/bench/", "/benchhub/")
# Any valid key, whatever its scopes: who am I.
ANY_KEY = {("GET", "/api/auth/me"), ("GET", "/v1/agent/me"),
           # Either of two scopes (claims:read for the claim's holder, claims:review for a reviewer of the task),
           # which a list of required scopes cannot say: the route checks them (tests/cli/test_review_and_appeal.py).
           ("GET", "/v1/files/{fileKey}/link"),
           # Track records are public to every key holder (docs/lifecycle.md, "Reputation", "Review deadlines").
           ("GET", "/v1/bots/{id}/reputation"), ("GET", "/v1/operators/{id}/reputation"),
           ("GET", "/v1/publishers/{id}/decisions")}
# No key by design: the URL is the credential (a short-lived link the service signed, like a presigned URL).
SIGNED_LINKS = {("PUT", "/v1/uploads/{fileKey}"), ("GET", "/v1/files/{fileKey}/content")}
# Columns that a refused request may legitimately touch: authentication records the key's last use.
VOLATILE = {"api_keys": {"last_used_at"}}
API_PATH = re.compile(r"^/(v1|api)/")


@pytest.fixture(scope="module")
def document(quiet_server: LiveServer) -> dict[str, Any]:
    return fetch(quiet_server.base_url)


def test_every_api_operation_declares_its_scopes(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    unguarded, scopeless = [], []
    for method, path, operation in operations(document):
        if not API_PATH.match(path) or path.startswith(PUBLIC_PREFIXES) or (method, path) in SIGNED_LINKS:
            continue
        scopes = bearer_scopes(operation)
        if scopes is None:
            unguarded.append(f"{method} {path}")
        elif not scopes and (method, path) not in ANY_KEY:
            scopeless.append(f"{method} {path}")
    assert not unguarded, f"operations without a bearer requirement: {unguarded}"
    assert not scopeless, f"operations that need a key but no scope: {scopeless}"
    # The table of DESIGN.md section 5, spot-checked where the foundation owns the routes.
    table = {(m, p): bearer_scopes(o) for m, p, o in operations(document)}
    assert table[("GET", "/v1/agent/bots")] == ["agent:manage"]
    assert table[("POST", "/v1/agent/bots")] == ["agent:manage"]
    assert table[("GET", "/v1/profile/api-keys")] == ["profile:read"]
    assert table[("POST", "/v1/profile/api-keys")] == ["agent:manage"]


def test_a_key_lacking_exactly_one_scope_is_refused_and_nothing_changes(
    quiet_server: LiveServer, quiet_admin: Admin, document: dict[str, Any],
) -> None:
    caller = quiet_admin.account("admin")  # an admin may hold every scope, so only the missing one matters
    spare_key = caller.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read"]})
    assert spare_key.status_code == 200, spare_key.text
    bot = caller.bot()
    # Real objects of the caller where the foundation knows them, so an unguarded route would act.
    known_ids = {"/v1/profile/api-keys/": spare_key.json()["id"], "/v1/admin/users/": caller.id,
                 "/v1/agent/bots/": bot.id}
    checked = 0
    keys: dict[str, str] = {}
    for method, path, operation in operations(document):
        for scope in bearer_scopes(operation) or []:
            if scope not in keys:
                keys[scope] = caller.new_key([s for s in ALL_SCOPES if s != scope])
            url = _fill_path(path, known_ids)
            before = table_rows(quiet_server, VOLATILE)
            with client(quiet_server.base_url, keys[scope]) as http:
                response = http.request(method, url, json=example_body(operation, document))
            after = table_rows(quiet_server, VOLATILE)
            where = f"{method} {path} without {scope}"
            assert response.status_code == 403, f"{where}: {response.status_code} {response.text}"
            problem = response.json()
            assert response.headers["content-type"] == "application/problem+json", where
            assert problem["code"] == "insufficient_scope", where
            assert problem["requiredScopes"] == [scope], where
            assert scope in problem["detail"], where
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith("Bearer ") and 'error="insufficient_scope"' in challenge, where
            assert f'scope="{scope}"' in challenge, where
            changed = sorted(table for table in set(before) | set(after) if before.get(table) != after.get(table))
            assert not changed, f"{where} changed {changed}"
            checked += 1
    assert checked >= len(ALL_SCOPES) - 1
    _assert_untouched(caller, bot.id, spare_key.json()["id"])


def _fill_path(path: str, known_ids: dict[str, str]) -> str:
    for prefix, identifier in known_ids.items():
        if path.startswith(prefix + "{"):
            path = path.replace(prefix + "{id}", prefix + identifier, 1)
    return re.sub(r"\{[^}]+\}", "zz_01jd2k3m4n5p6q7r8s9t0v1w2x", path)


def _assert_untouched(caller: Account, bot_id: str, spare_key_id: str) -> None:
    """Seen through the API as well: the bot and the spare key are as they were."""
    bots = caller.http.get("/v1/agent/bots").json()["data"]
    assert [item["id"] for item in bots] == [bot_id]
    keys = {item["id"]: item for item in caller.http.get("/v1/profile/api-keys").json()["data"]}
    assert keys[spare_key_id]["revokedAt"] is None
