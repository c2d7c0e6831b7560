"""Credentials: ``login``, ``logout`` and ``whoami``."""

from __future__ import annotations

import sys
from typing import Annotated

import httpx
import typer
from rich.markup import escape

from bountyboard.cli import session, tables
from bountyboard.cli.session import (
    EXIT_API_ERROR,
    JsonFlag,
    client_session,
    config_path,
    console,
    err_console,
    load_config,
    save_config,
    show,
)
from bountyboard.client import ApiError, Client


def login(
    key: Annotated[str | None, typer.Option("--key", help="The API key (read from stdin or a prompt if omitted).")]
    = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Address of the service.")] = None,
) -> None:
    """Check an API key against the service and store it in the user's config directory (mode 0600)."""
    if key is None:
        key = sys.stdin.readline().strip() if not sys.stdin.isatty() else typer.prompt("API key", hide_input=True)
    config = load_config()
    url = (base_url or session.base_url()).rstrip("/")
    with Client(url, key, max_retries=2) as client:
        try:
            me = client.whoami()
        except ApiError as error:
            err_console.print(f"[red]error:[/red] the service refused the key: {escape(error.detail)}")
            raise typer.Exit(EXIT_API_ERROR) from error
        except httpx.TransportError as error:
            err_console.print(f"[red]error:[/red] cannot reach {escape(url)}: {escape(str(error))}")
            raise typer.Exit(EXIT_API_ERROR) from error
    path = save_config({**config, "baseUrl": url, "apiKey": key})
    console.print(f"Logged in to {url} as {me['actorType']} [bold]{escape(me['displayName'])}[/bold] "
                  f"(scopes: {', '.join(me['scopes'])}). Key stored in {path}.")


def logout() -> None:
    """Forget the stored API key."""
    config = load_config()
    if "apiKey" not in config:
        console.print("No stored key.")
        return
    config.pop("apiKey")
    save_config(config)
    console.print(f"Removed the key from {config_path()}.")


def whoami(as_json: JsonFlag = False) -> None:
    """The identity behind the key."""
    with client_session() as client:
        me = client.whoami()
    show(me, as_json, lambda found: tables.fields(f"{client.base_url}", found))


def register(app: typer.Typer) -> None:
    for command in (login, logout, whoami):
        app.command()(command)
