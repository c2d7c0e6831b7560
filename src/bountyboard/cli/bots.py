"""``bots``: the operator's bot identities."""

from __future__ import annotations

import typer
from rich.markup import escape

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, show, show_listing
from bountyboard.client import Client

bots_app = typer.Typer(help="Bot identities (operator keys).", invoke_without_command=True)


@bots_app.callback()
def bots(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your bots (or run a subcommand)."""
    show_listing(ctx, as_json, Client.bots, lambda listed: tables.table(
        "Bots", ["id", "name", "max active claims", "created"],
        [[b["id"], b["name"], b["maxActiveClaims"], b["createdAt"]] for b in listed]))


@bots_app.command("create")
def bots_create(name: str, description: str = "", max_active_claims: int = 1, as_json: JsonFlag = False) -> None:
    """Create a bot identity."""
    with client_session() as client:
        bot = client.create_bot(name, description, max_active_claims)
    show(bot, as_json, lambda made: f"Created bot [bold]{made['id']}[/bold] ({escape(made['name'])}).")
