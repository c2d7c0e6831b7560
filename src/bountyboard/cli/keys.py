"""``keys``: the operator's API keys."""

from __future__ import annotations

from typing import Annotated

import typer

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, console, show, show_listing
from bountyboard.client import Client
from bountyboard.contract.scopes import RECOMMENDED_WORKER_SCOPES

keys_app = typer.Typer(help="API keys (operator keys).", invoke_without_command=True)


@keys_app.callback()
def keys(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your API keys (or run a subcommand)."""
    show_listing(ctx, as_json, Client.keys, lambda listed: tables.table(
        "API keys", ["id", "name", "kind", "bot", "scopes", "prefix", "last used", "revoked"],
        [[k["id"], k["name"], k["kind"], k["botId"], " ".join(k["scopes"]), k["prefix"], k["lastUsedAt"],
          k["revokedAt"]] for k in listed]))


@keys_app.command("create")
def keys_create(
    kind: Annotated[str, typer.Option(help="bot or user")] = "bot",
    bot: Annotated[str | None, typer.Option(help="The bot id (kind bot).")] = None,
    scopes: Annotated[str, typer.Option(help="Comma-separated scopes.")] = ",".join(RECOMMENDED_WORKER_SCOPES),
    name: str = "",
    as_json: JsonFlag = False,
) -> None:
    """Create a scoped key; the secret is printed once."""
    with client_session() as client:
        created = client.create_key(kind, [s.strip() for s in scopes.split(",") if s.strip()], bot_id=bot, name=name)
    show(created, as_json, lambda made: f"Created key {made['id']} ({made['kind']}, {' '.join(made['scopes'])}). "
                                        "It is shown this once:", then_verbatim=created.get("key", ""))


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key at once."""
    with client_session() as client:
        revoked = client.revoke_key(key_id)
    console.print(f"Revoked {revoked['id']} at {revoked['revokedAt']}.")
