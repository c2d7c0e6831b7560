"""Discovery for other ecosystems: the A2A Agent Card and the MCP Registry's server.json, served and valid."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3.types import AgentCard as AgentCardV03
from a2a.utils.proto_utils import validate_proto_required_fields

from bountyboard.mcp_server.tools import TOOLS
from bountyboard.meta.discovery import MCP_REGISTRY_NAME, mcp_server_document
from tests.client.loop import REPO_ROOT
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

# The MCP Registry's server.json schema, 2025-12-11 (the registry's current one), vendored because no
# package on PyPI or npm ships it and the tests run offline; see the file's section in docs/agents.md.
SERVER_SCHEMA = json.loads((Path(__file__).parent / "mcp_server_2025-12-11.schema.json").read_text())
KEPT_SERVER_JSON = REPO_ROOT / "src" / "bountyboard" / "meta" / "server.json"


def get_json(server: LiveServer, path: str) -> Any:
    response = httpx.get(server.base_url + path, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def test_agent_card_is_valid_for_the_a2a_sdk(server: LiveServer) -> None:
    card = get_json(server, "/.well-known/agent-card.json")
    # The protocol 0.3.0 model (pydantic): valid, and nothing in the card that the model does not know.
    parsed = AgentCardV03.model_validate(card)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == card
    # The SDK's current resolver reads it into a 1.x card with every required field set.
    current = parse_agent_card(copy.deepcopy(card))
    validate_proto_required_fields(current)
    assert card["name"] == "bountyboard" and card["version"] == "1.0.0" and card["description"]
    assert card["url"] == server.base_url + "/mcp"
    assert [(i["transport"], i["url"]) for i in card["additionalInterfaces"]] == [
        ("MCP", server.base_url + "/mcp"), ("REST", server.base_url)]
    preferred = current.supported_interfaces[0]
    assert (preferred.protocol_binding, preferred.url) == ("MCP", server.base_url + "/mcp")
    assert card["securitySchemes"]["bearerAuth"]["type"] == "http"
    assert card["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert current.security_schemes["bearerAuth"].http_auth_security_scheme.bearer_format == "svc-<secret>"
    assert card["security"] == [{"bearerAuth": []}]
    manifest = get_json(server, "/v1/meta/agent-manifest")
    scopes = {tool["name"]: tool["scopes"] for tool in manifest["mcp"]["tools"]}
    assert [skill["id"] for skill in card["skills"]] == [tool.name for tool in TOOLS]
    for skill in card["skills"]:
        assert skill["security"] == [{"bearerAuth": scopes[skill["id"]]}]
    assert httpx.get(card["documentationUrl"], timeout=30).status_code == 200


def test_mcp_server_json_is_valid_and_kept_in_the_repository(server: LiveServer) -> None:
    served = get_json(server, "/v1/meta/mcp-server.json")
    validator = jsonschema.Draft7Validator(SERVER_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(served)]
    assert not errors, errors
    assert served["$schema"] == SERVER_SCHEMA["$id"]
    assert served["name"] == MCP_REGISTRY_NAME
    kept = json.loads(KEPT_SERVER_JSON.read_text())
    assert served == kept == mcp_server_document(), "regenerate: python -m bountyboard.meta.discovery > " \
        "src/bountyboard/meta/server.json"
    package = served["packages"][0]
    assert package["packageArguments"] == [{"type": "positional", "value": "mcp"}]
    assert {v["name"] for v in package["environmentVariables"]} == {"BOUNTYBOARD_BASE_URL", "BOUNTYBOARD_API_KEY"}
    assert served["remotes"][0]["url"].endswith("/mcp")
    # The registry checks the PyPI package's description (README.md) for the ownership marker.
    assert f"mcp-name: {MCP_REGISTRY_NAME}" in (REPO_ROOT / "README.md").read_text()


def test_the_schema_refuses_what_the_registry_refuses() -> None:
    """The vendored schema is the one that checks: a bad name and a long description are refused."""
    validator = jsonschema.Draft7Validator(SERVER_SCHEMA)
    document = mcp_server_document()
    assert not list(validator.iter_errors(document))
    assert list(validator.iter_errors({**document, "name": "bountyboard"}))
    assert list(validator.iter_errors({**document, "description": "x" * 101}))


def test_the_manifest_links_both(server: LiveServer) -> None:
    resources = get_json(server, "/v1/meta/agent-manifest")["resources"]
    assert resources["agentCard"] == server.base_url + "/.well-known/agent-card.json"
    assert resources["mcpServer"] == server.base_url + "/v1/meta/mcp-server.json"
    skill = httpx.get(server.base_url + "/v1/meta/skill.md", timeout=30).text
    assert resources["agentCard"] in skill and resources["mcpServer"] in skill
