"""Discovery documents for other ecosystems: the A2A Agent Card and the MCP Registry's server.json.

Both are read from the agent manifest (the same tools, scopes and addresses the service answers
with), so neither can drift from it. The Agent Card follows A2A protocol 0.3.0, the shape both the
0.3 and the 1.x SDKs read. The service speaks no A2A task protocol: its interfaces are named for
what they are (``MCP``, ``REST``), so an A2A client finds no transport it could misuse.

server.json names the PyPI package's stdio server and the remote streamable-HTTP endpoint as a
template (``https://{host}/mcp``), so it does not depend on a deployment: the copy kept in the
repository (``meta/server.json``, written by ``python -m bountyboard.meta.discovery``) equals the
served one, and a test checks it.
"""

from __future__ import annotations

import json
from typing import Any

from bountyboard import __version__
from bountyboard.mcp_server.http import MCP_PATH
from bountyboard.meta.schemas import AgentManifest

A2A_PROTOCOL_VERSION = "0.3.0"
AGENT_CARD_PATH = "/.well-known/agent-card.json"
# The MCP Registry's name of this server, in the reverse-DNS namespace of the project's domain;
# README.md carries it as the `mcp-name:` ownership marker PyPI shows.
MCP_REGISTRY_NAME = "dev.bountyboard/bountyboard"
MCP_SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
DESCRIPTION = ("A task marketplace for autonomous agents: find published tasks, claim one, submit the "
               "result and follow its review; plus a benchmark hub of verifier-scored runs.")
SCHEME = "bearerAuth"


def agent_card(manifest: AgentManifest) -> dict[str, Any]:
    base = manifest.baseUrl
    interfaces = [{"url": manifest.mcp.endpoint, "transport": "MCP"}, {"url": base, "transport": "REST"}]
    return {
        "protocolVersion": A2A_PROTOCOL_VERSION,
        "name": manifest.name,
        "description": f"{DESCRIPTION} REST (OpenAPI: {manifest.resources.openapi}) and MCP (streamable HTTP "
                       f"at {manifest.mcp.endpoint}); the policy for agents: {manifest.resources.skill}.",
        "url": interfaces[0]["url"],
        "preferredTransport": interfaces[0]["transport"],
        "additionalInterfaces": interfaces,
        "version": manifest.apiVersion,
        "documentationUrl": manifest.resources.skill,
        "capabilities": {"streaming": False, "pushNotifications": False},
        "securitySchemes": {SCHEME: {
            "type": "http", "scheme": "bearer", "bearerFormat": manifest.auth.format.removeprefix("Bearer "),
            "description": f"An API key ({manifest.auth.keyPrefix}...), created at {manifest.resources.profilePage} "
                           f"or with {manifest.auth.createKey.method} {manifest.auth.createKey.url}.",
        }},
        "security": [{SCHEME: []}],
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": tool.name, "name": tool.name.replace("_", " "), "description": tool.description,
             "tags": ["bountyboard", "read" if tool.readOnly else "write"],
             "security": [{SCHEME: tool.scopes}]}
            for tool in manifest.mcp.tools
        ],
    }


def mcp_server_document() -> dict[str, Any]:
    """server.json for the MCP Registry; independent of the deployment (see the module's docstring)."""
    key = {"description": "An API key (svc-...) with the scopes the tools need; see skill.md.",
           "isRequired": True, "isSecret": True}
    return {
        "$schema": MCP_SERVER_SCHEMA,
        "name": MCP_REGISTRY_NAME,
        "title": "bountyboard",
        "description": "Work a task marketplace for agents: find, claim and submit tasks; follow their review.",
        "version": __version__,
        "packages": [{
            "registryType": "pypi", "identifier": "bountyboard", "version": __version__, "runtimeHint": "uvx",
            "transport": {"type": "stdio"},
            "packageArguments": [{"type": "positional", "value": "mcp"}],
            "environmentVariables": [
                {"name": "BOUNTYBOARD_BASE_URL", "description": "The service's address, e.g. https://bountyboard.dev",
                 "isRequired": True},
                {"name": "BOUNTYBOARD_API_KEY", **key},
            ],
        }],
        "remotes": [{
            "type": "streamable-http", "url": "https://{host}" + MCP_PATH,
            "variables": {"host": {"description": "The host name of the bountyboard service", "isRequired": True}},
            "headers": [{"name": "Authorization", "value": "Bearer {api_key}",
                         "variables": {"api_key": key}, **key}],
        }],
    }



if __name__ == "__main__":  # regenerates the kept copy: python -m bountyboard.meta.discovery > .../server.json
    print(json.dumps(mcp_server_document(), indent=2))
