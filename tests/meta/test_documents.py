"""The machine-readable companions: generated from the routes the app really serves, and correct."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import httpx
import jsonschema
import pytest
from fastapi import FastAPI
from openapi_spec_validator import validate

from bountyboard.accounts.auth import Actor, require
from bountyboard.app import create_app
from bountyboard.contract.scopes import RECOMMENDED_WORKER_SCOPES, Scope
from bountyboard.market.modules import ALLOWED_ARTIFACT_TYPES
from bountyboard.meta.manifest import build_manifest
from bountyboard.meta.openapi import HTTP_METHODS, agent_document, benchhub_document
from bountyboard.meta.postman import build_collection
from bountyboard.meta.skill import render_skill
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

POSTMAN_SCHEMA = json.loads((Path(__file__).parent / "postman_collection_v2.1.0.schema.json").read_text())
# DESIGN.md section 5, as the document must state it.
EXPECTED_SCOPES = {
    ("get", "/api/auth/me"): [],
    ("get", "/v1/agent/me"): [],
    ("get", "/v1/agent/tasks"): ["tasks:read"],
    ("get", "/v1/agent/tasks/{id}"): ["tasks:read"],
    ("post", "/v1/agent/tasks/{id}/claim"): ["tasks:claim"],
    ("post", "/v1/agent/claims/{id}/heartbeat"): ["tasks:claim"],
    ("post", "/v1/agent/claims/{id}/release"): ["tasks:claim"],
    ("get", "/v1/agent/claims"): ["claims:read"],
    ("get", "/v1/agent/claims/{id}/status"): ["claims:read"],
    ("get", "/v1/agent/events"): ["claims:read"],
    ("post", "/v1/agent/claims/{id}/submit"): ["claims:submit"],
    ("post", "/v1/agent/claims/{id}/appeal"): ["claims:submit"],
    ("get", "/v1/agent/bots"): ["agent:manage"],
    ("post", "/v1/agent/bots"): ["agent:manage"],
    ("get", "/v1/agent/webhooks"): ["webhooks:manage"],
    ("post", "/v1/agent/webhooks"): ["webhooks:manage"],
    ("get", "/v1/judge/tasks/{id}/target"): ["judge:read"],
    ("get", "/v1/leaderboard"): ["leaderboard:read"],
    ("get", "/v1/profile/api-keys"): ["profile:read"],
}


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, item[method]) for path, item in document["paths"].items()
            for method in HTTP_METHODS if method in item]


def get(server: LiveServer, path: str) -> httpx.Response:
    response = httpx.get(server.base_url + path, timeout=30)
    assert response.status_code == 200, response.text
    return response


@pytest.fixture(scope="module")
def documents(server: LiveServer) -> tuple[dict[str, Any], dict[str, Any]]:
    return (get(server, "/v1/meta/openapi.json").json(), get(server, "/v1/meta/benchhub-openapi.json").json())


def test_agent_document_is_valid_openapi_3_1(documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    agent, _ = documents
    validate(agent)
    assert agent["openapi"] == "3.1.0"
    assert agent["info"]["version"] == "1.0.0"
    assert agent["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "bearerFormat": "svc-<secret>",
        "description": "An API key created on the profile page or with POST /v1/profile/api-keys.",
    }
    for method, path, op in operations(agent):
        for (expected_method, expected_path), scopes in EXPECTED_SCOPES.items():
            if (method, path) == (expected_method, expected_path):
                assert op["security"] == [{"bearerAuth": scopes}], (method, path)
        assert op["responses"]["default"]["content"]["application/problem+json"]["schema"] == {
            "$ref": "#/components/schemas/ProblemDetail"}
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")):
                assert list(response["content"]) == ["application/problem+json"], (method, path, status)
        if op.get("security"):
            assert {"401", "403"} <= set(op["responses"]), (method, path)
        if method == "post":
            assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in op["parameters"])
        if path.startswith("/v1/meta/"):
            assert "security" not in op
    assert {(m, p) for m, p, _ in operations(agent)} >= set(EXPECTED_SCOPES)


def test_scopes_in_the_document_are_the_scopes_enforced(server: LiveServer, admin: Admin,
                                                       documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """A key with only profile:read gets 403 naming exactly the documented scopes."""
    agent, _ = documents
    operator = admin.account("operator")
    key = operator.new_key(["profile:read"])
    narrow = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"})
    checked = 0
    for method, path, op in operations(agent):
        scopes = op.get("x-required-scopes") or []
        if method != "get" or "{" in path or not scopes or "profile:read" in scopes:
            continue
        answer = narrow.get(path)
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json()["requiredScopes"] == scopes, path
        checked += 1
    assert checked >= 5


def _validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**schema, "components": document["components"]})


def test_every_example_follows_its_schema(documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    checked = 0
    for document in documents:
        for method, path, op in operations(document):
            media_types = [*op.get("requestBody", {}).get("content", {}).values()]
            media_types += [media for response in op["responses"].values()
                            for media in response.get("content", {}).values()]
            for media in media_types:
                if "example" in media and "schema" in media:
                    errors = list(_validator(document, media["schema"]).iter_errors(media["example"]))
                    assert not errors, (method, path, [e.message for e in errors])
                    checked += 1
    assert checked > 50


def test_webhooks_describe_the_public_events(documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    agent, _ = documents
    assert list(agent["webhooks"]) == ["task.claimed", "claim.submitted", "claim.reviewed", "appeal.resolved",
                                      "claim.checked"]
    for name, item in agent["webhooks"].items():
        body = item["post"]["requestBody"]["content"]["application/json"]
        assert body["schema"]["properties"]["type"] == {"type": "string", "const": name}
        assert not list(_validator(agent, body["schema"]).iter_errors(body["example"]))
        assert [p["name"] for p in item["post"]["parameters"]] == ["webhook-id", "webhook-timestamp",
                                                                    "webhook-signature"]


def test_real_events_match_the_documented_payloads(server: LiveServer, admin: Admin,
                                                   documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Each public event the service emits has the shape the webhooks section promises."""
    agent, _ = documents
    market = Marketplace(admin)
    task = market.publish("fun")
    claim = market.bot.http.post(f"/v1/agent/tasks/{task['id']}/claim").json()
    submitted = market.bot.http.post(f"/v1/agent/claims/{claim['claimId']}/submit",
                                     json={"resultType": "text", "content": "A haiku."})
    assert submitted.status_code == 200, submitted.text
    market.review(claim["claimId"], "reject", "Not a haiku.")
    appeal = market.bot.http.post(f"/v1/agent/claims/{claim['claimId']}/appeal", json={"reason": "It is."})
    assert appeal.status_code == 200, appeal.text
    judge = admin.account("reviewer")  # not the reviewer who rejected
    resolved = judge.http.post(f"/v1/appeals/{appeal.json()['id']}/resolve",
                               json={"outcome": "upheld", "comment": "Fair."})
    assert resolved.status_code == 200, resolved.text
    events = market.bot_events("task.claimed,claim.submitted,claim.reviewed,appeal.resolved")
    assert [e["type"] for e in events] == ["task.claimed", "claim.submitted", "claim.reviewed", "appeal.resolved"]
    for event in events:
        envelope = agent["webhooks"][event["type"]]["post"]["requestBody"]["content"]["application/json"]["schema"]
        payload = {"type": event["type"], "timestamp": event["timestamp"], "data": event["data"]}
        errors = list(_validator(agent, envelope).iter_errors(payload))
        assert not errors, (event["type"], [e.message for e in errors])


def test_benchhub_document_is_published_beside_and_linked(server: LiveServer,
                                                          documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    agent, hub = documents
    validate(hub)
    assert hub["openapi"] == "3.1.0" and hub["info"]["version"] == "2.0.0"
    hub_paths = set(hub["paths"])
    assert {"/v1/runs", "/v1/bench/reproduced"} <= hub_paths
    assert not hub_paths & set(agent["paths"])
    manifest = get(server, "/v1/meta/agent-manifest").json()
    assert manifest["resources"]["benchhubOpenapi"] == server.base_url + "/v1/meta/benchhub-openapi.json"


def test_manifest(server: LiveServer, documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    manifest = get(server, "/v1/meta/agent-manifest").json()
    assert manifest["baseUrl"] == server.base_url and manifest["apiVersion"] == "1.0.0"
    resources = manifest["resources"]
    urls = [*{k: v for k, v in resources.items() if k != "examples"}.values(), *resources["examples"].values()]
    for url in urls:
        assert url.startswith(server.base_url + "/"), url
        assert httpx.get(url, timeout=30, follow_redirects=True).status_code == 200, url
    assert manifest["auth"]["scheme"] == "bearer" and manifest["auth"]["keyPrefix"] == "svc-"
    assert manifest["scopes"]["recommendedMinimum"] == [s.value for s in RECOMMENDED_WORKER_SCOPES]
    assert {m["name"]: m["allowedArtifactTypes"] for m in manifest["modules"]} == {
        module.value: [kind.value for kind in kinds] for module, kinds in ALLOWED_ARTIFACT_TYPES.items()}
    assert [m["name"] for m in manifest["modules"] if not m["claimable"]] == ["show"]
    assert [step["step"] for step in manifest["workflow"]] == ["discover", "claim", "submit", "track"]
    agent, _ = documents
    for step in manifest["workflow"]:
        op = agent["paths"][step["path"]][step["method"].lower()]
        assert step["scopes"] == op["x-required-scopes"] and step["scopes"]
    assert manifest["limits"]["maxAttachments"] == 10 and manifest["limits"]["simultaneousClaims"] == 1
    listed = {(op["method"].lower(), op["path"]) for op in manifest["operations"]}
    assert listed == {(m, p) for document in documents for m, p, _ in operations(document)}


def test_skill_md_states_the_caller_rules(server: LiveServer, documents: tuple[dict[str, Any], dict[str, Any]]) -> None:
    answer = get(server, "/v1/meta/skill.md")
    assert answer.headers["content-type"].startswith("text/markdown")
    text = answer.text
    for rule in ("Persist the claim id", "Submit idempotently", "Claim exactly one task at a time",
                 "Fail closed on a missing scope", "Review is asynchronous", "Idempotency-Key", "Retry-After"):
        assert rule in text
    assert "`tasks:read`, `tasks:claim`, `claims:read`, `claims:submit`" in text
    for document in documents:
        for method, path, _ in operations(document):
            assert f"| {method.upper()} | `{path}` |" in text


def _postman_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests of a collection, folders (and folders in folders) opened."""
    return [leaf for item in items for leaf in (_postman_items(item["item"]) if "item" in item else [item])]


def _postman_operations(collection: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every request to an operation (the loop's transfers to a URL the service handed out are not)."""
    found = []
    for item in _postman_items(collection["item"]):
        if isinstance(item["request"]["url"], str):
            assert re.fullmatch(r"\{\{(uploadUrl|downloadUrl)\}\}", item["request"]["url"]), item["name"]
            continue
        segments = ["{" + s[1:] + "}" if s.startswith(":") else s for s in item["request"]["url"]["path"]]
        found.append((item["request"]["method"].lower(), "/" + "/".join(segments), item["request"]))
    return found


def test_postman_collection_is_valid_v2_1_with_every_operation(
    server: LiveServer, documents: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    collection = get(server, "/v1/meta/postman.json").json()
    jsonschema.Draft7Validator(POSTMAN_SCHEMA).validate(collection)
    assert collection["info"]["schema"] == "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"
    assert {v["key"]: v["value"] for v in collection["variable"]}["baseUrl"] == server.base_url
    assert collection["auth"] == {"type": "bearer", "bearer": [{"key": "token", "value": "{{botKey}}",
                                                                "type": "string"}]}
    assert [folder["name"] for folder in collection["item"]] == [
        "Discovery", "Publisher", "Bot", "Reviewer", "Publisher, after the review", "Bench hub", "Outside the loop"]
    declared = {v["key"] for v in collection["variable"]}
    assert {"baseUrl", "botKey", "publisherKey", "reviewerKey", "taskId", "claimId"} <= declared
    assert set(re.findall(r"\{\{([A-Za-z]\w*)\}\}", json.dumps(collection))) <= declared
    for item in _postman_items(collection["item"]):
        tests = next(e for e in item["event"] if e["listen"] == "test")["script"]["exec"]
        assert any(line.startswith("pm.test(") for line in tests), item["name"]
    requests = _postman_operations(collection)
    expected = [(m, p) for document in documents for m, p, _ in operations(document)]
    assert sorted((m, p) for m, p, _ in requests) == sorted(expected)
    public = {(m, p) for document in documents for m, p, op in operations(document)
              if not any("bearerAuth" in r for r in op.get("security", []))}
    for method, path, request in requests:
        assert request["url"]["raw"].startswith("{{baseUrl}}/")
        if method == "post":
            assert {"key": "Idempotency-Key", "value": "{{$guid}}"}.items() <= next(
                h for h in request["header"] if h["key"] == "Idempotency-Key").items()
        assert (request.get("auth") == {"type": "noauth"}) == ((method, path) in public)
        for variable in request["url"].get("variable", []):
            assert re.fullmatch(r"\{\{\w+\}\}", variable["value"]), (method, path, variable)


def test_a_new_route_appears_in_every_companion() -> None:
    """Nothing is written by hand: a route added to the app shows up everywhere, with its scope."""
    app: FastAPI = create_app()

    @app.post("/v1/agent/claims/{id}/celebrate", tags=["agent"], summary="Celebrate an accepted claim")
    async def celebrate(id: str, actor: Annotated[Actor, require(Scope.CLAIMS_READ)]) -> dict[str, str]:
        return {"claimId": id}

    document = agent_document(app)
    op = document["paths"]["/v1/agent/claims/{id}/celebrate"]["post"]
    assert op["security"] == [{"bearerAuth": ["claims:read"]}]
    assert {"401", "403", "404", "422", "default"} <= set(op["responses"])
    manifest = build_manifest(app)
    assert any(o.path == "/v1/agent/claims/{id}/celebrate" and o.method == "POST" and o.scopes == ["claims:read"]
               for o in manifest.operations)
    assert "| POST | `/v1/agent/claims/{id}/celebrate` | required | `claims:read` | Celebrate an accepted claim |" \
        in render_skill(manifest)
    collection = build_collection([document, benchhub_document(app)], "http://example.test")
    assert ("post", "/v1/agent/claims/{id}/celebrate") in {(m, p) for m, p, _ in _postman_operations(collection)}
    # And a fresh app without it does not mention it anywhere.
    assert "/v1/agent/claims/{id}/celebrate" not in json.dumps(agent_document(create_app()))
