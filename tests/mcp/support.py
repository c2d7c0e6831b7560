"""MCP clients of the SDK itself, over either transport, against a live server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent


def http_client(base_url: str, key: str | None, headers: dict[str, str] | None = None) -> Client:
    headers = {**({"Authorization": f"Bearer {key}"} if key else {}), **(headers or {})}
    transport = streamable_http_client(f"{base_url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    return Client(transport)


def stdio_client(base_url: str, key: str, *options: str, env: dict[str, str] | None = None) -> Client:
    """``bountyboard mcp [options]`` as a child process, as an MCP client configuration starts it; ``env`` adds
    settings (the configuration directory, say)."""
    settings = {name: value for name, value in os.environ.items() if not name.startswith("BOUNTYBOARD_")}
    settings.update(BOUNTYBOARD_BASE_URL=base_url, BOUNTYBOARD_API_KEY=key, BOUNTYBOARD_LOG_LEVEL="WARNING",
                    **(env or {}))
    command = StdioServerParameters(command=sys.executable, args=["-m", "bountyboard", "mcp", *options],
                                    env=settings)
    return Client(command, read_timeout_seconds=120)


# An MCP client of the service at a base URL with a key, by transport.
TRANSPORTS: dict[str, Callable[[str, str], Client]] = {"http": http_client, "stdio": stdio_client}


def answer(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call (the REST JSON)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


def problem(result: CallToolResult) -> dict[str, Any]:
    """The problem JSON of a refused call."""
    assert result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    return dict(json.loads(block.text))
