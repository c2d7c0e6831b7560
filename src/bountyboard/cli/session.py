"""The CLI's credentials and its SDK client: where the key comes from and how errors are shown.

The key is taken from ``BOUNTYBOARD_API_KEY`` or from the file written by ``bountyboard login``
(``config.json`` in the user's config directory, mode 0600); the service address from
``BOUNTYBOARD_BASE_URL``, the same file, or the local default.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import httpx
import typer
from rich.console import Console, RenderableType
from rich.markup import escape

from bountyboard.client import ApiError, Client, InvalidIdError, MissingScopeError
from bountyboard.client.client import DEFAULT_BASE_URL
from bountyboard.client.state import config_dir, write_private

console = Console()
err_console = Console(stderr=True)

EXIT_API_ERROR = 1
EXIT_NO_KEY = 2
EXIT_MISSING_SCOPE = 3

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the service's JSON instead of a table.")]
Shown = TypeVar("Shown")


def config_path() -> Path:
    return config_dir() / "config.json"


def load_config() -> dict[str, Any]:
    path = config_path()
    return dict(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else {}


def save_config(config: dict[str, Any]) -> Path:
    path = config_path()
    write_private(path, json.dumps(config, indent=2))
    return path


def base_url() -> str:
    return (os.environ.get("BOUNTYBOARD_BASE_URL") or load_config().get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")


def api_key() -> str | None:
    return os.environ.get("BOUNTYBOARD_API_KEY") or load_config().get("apiKey")


def make_client(state_path: Path | None = None) -> Client:
    key = api_key()
    if not key:
        err_console.print("[red]error:[/red] no API key: run [bold]bountyboard login[/bold] or set "
                          "BOUNTYBOARD_API_KEY.")
        raise typer.Exit(EXIT_NO_KEY)
    return Client(base_url(), key, state_path=state_path)


@contextlib.contextmanager
def client_session(state_path: Path | None = None) -> Iterator[Client]:
    """A client whose failures end the command with a clear message and a distinct exit status."""
    client = make_client(state_path)
    try:
        yield client
    except MissingScopeError as error:
        err_console.print(f"[red]refusing:[/red] {escape(str(error))}")
        raise typer.Exit(EXIT_MISSING_SCOPE) from error
    except InvalidIdError as error:
        err_console.print(f"[red]error:[/red] {escape(str(error))}")
        raise typer.Exit(EXIT_API_ERROR) from error
    except ApiError as error:
        err_console.print(f"[red]error:[/red] {error.status} {escape(error.code)}: {escape(error.detail)}")
        for field_error in error.problem.get("errors") or []:
            err_console.print(escape(f"  {field_error.get('field')}: {field_error.get('message')}"))
        if error.code == "insufficient_scope":
            raise typer.Exit(EXIT_MISSING_SCOPE) from error
        raise typer.Exit(EXIT_API_ERROR) from error
    except httpx.TransportError as error:
        err_console.print(f"[red]error:[/red] cannot reach {client.base_url}: {escape(str(error))}")
        raise typer.Exit(EXIT_API_ERROR) from error
    finally:
        client.close()


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def show(value: Shown, as_json: bool, render: Callable[[Shown], RenderableType] | None, *,
         then_verbatim: str | None = None) -> None:
    """What every command prints: the service's JSON with ``--json``, else ``render``'s Rich text or table
    (tables keep ids whole, see ``tables``). ``then_verbatim`` follows as a bare line, unstyled and
    unwrapped, so a secret shown once can be copied."""
    if as_json:
        print_json(value)
        return
    if render is not None:
        console.print(render(value))
    if then_verbatim is not None:
        sys.stdout.write(then_verbatim + "\n")
        sys.stdout.flush()


def show_listing(ctx: typer.Context, as_json: bool, fetch: Callable[[Client], Shown],
                 render: Callable[[Shown], RenderableType]) -> None:
    """A resource group (``bots``, ``keys``, ``webhooks``) called alone lists what ``fetch`` reads; given a
    subcommand, it leaves the work to that."""
    if ctx.invoked_subcommand is not None:
        return
    with client_session() as client:
        found = fetch(client)
    show(found, as_json, render)
