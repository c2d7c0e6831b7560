"""``bountyboard mcp``: the agent loop as MCP tools over stdio, for clients that start a local process."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bountyboard.cli.session import EXIT_NO_KEY, api_key, base_url, err_console


def mcp(
    files_root: Annotated[Path | None, typer.Option(
        "--files-root", exists=True, file_okay=False, dir_okay=True,
        help="The directory whose files submit_result may upload (file_paths, relative to it). Without it, "
             "no local file is read. Never the configuration or state directory, even under it.")] = None,
) -> None:
    """Serve the MCP tools over stdio, acting with BOUNTYBOARD_API_KEY against BOUNTYBOARD_BASE_URL."""
    from bountyboard.mcp_server.stdio import serve_stdio

    key = api_key()
    if not key:
        err_console.print("[red]error:[/red] no API key: set BOUNTYBOARD_API_KEY (or run bountyboard login).")
        raise typer.Exit(EXIT_NO_KEY)
    serve_stdio(base_url(), key, files_root)
