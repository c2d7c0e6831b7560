"""``bountyboard mcp``: the MCP server over stdio, calling a service over the network.

The tools act with one key (``BOUNTYBOARD_API_KEY``, or the one ``bountyboard login`` saved) against
``BOUNTYBOARD_BASE_URL``; the SDK's retry rules apply (429, 5xx and connection errors are retried
with backoff, each POST with one Idempotency-Key). Nothing is kept on disk: ``submit_result``
derives its Idempotency-Key from its arguments, so a restarted process replays the first receipt.
``submit_result`` uploads local files only from under ``files_root`` (:mod:`.files`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.server.mcpserver import Context

from bountyboard.client import AsyncClient
from bountyboard.client.state import StateFile
from bountyboard.mcp_server.files import LocalFiles
from bountyboard.mcp_server.server import BountyboardMCP, build_server


def stdio_server(base_url: str, api_key: str, files_root: Path | None = None) -> BountyboardMCP:
    # One client per identity for the life of the process, so its connections are kept alive between calls.
    clients: dict[str | None, AsyncClient] = {}

    @asynccontextmanager
    async def connect(ctx: Context | None) -> AsyncIterator[AsyncClient]:
        key = api_key if ctx is not None else None
        if key not in clients:
            clients[key] = AsyncClient(base_url, key, state=StateFile(None), check_scopes=False)
        yield clients[key]

    return build_server(connect, files=LocalFiles(files_root))


def serve_stdio(base_url: str, api_key: str, files_root: Path | None = None) -> None:
    stdio_server(base_url, api_key, files_root).run("stdio")
