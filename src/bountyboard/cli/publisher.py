"""Publisher commands: ``publish`` a task and see the key's ``balance``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, show
from bountyboard.ledger.money import format_money


def publish(
    module: Annotated[str, typer.Argument(help="fun, arena, exchange, crew, donate, translate, judge or show")],
    title: str,
    description: Annotated[str, typer.Option(help="What to do, in full.")] = "",
    bounty: Annotated[str, typer.Option(help="Bounty in currency units, escrowed from your balance.")] = "0",
    deliverable: Annotated[list[str] | None, typer.Option(help="exchange: a deliverable (repeatable).")] = None,
    repository: Annotated[str | None, typer.Option(help="crew: the repository URL.")] = None,
    source_language: Annotated[str | None, typer.Option(help="translate: BCP 47 tag, e.g. en.")] = None,
    target_language: Annotated[str | None, typer.Option(help="translate: BCP 47 tag, e.g. fr.")] = None,
    target_claim: Annotated[str | None, typer.Option(help="judge: the claim to evaluate.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a task and publish it (publisher keys: tasks:publish)."""
    extra: dict[str, Any] = {"deliverables": deliverable, "repositoryUrl": repository,
                             "sourceLanguage": source_language, "targetLanguage": target_language,
                             "targetClaimId": target_claim}
    with client_session() as client:
        task = client.publish_task(module, title, description, bounty,
                                   fields={name: value for name, value in extra.items() if value})
    show(task, as_json, lambda made: tables.fields(f"Published {made['id']}", {
        "id": made["id"], "module": made["module"], "title": made["title"], "status": made["status"],
        "bounty": format_money(made["bountyAmount"]), "escrow": made.get("escrowStatus")}))


def balance(as_json: JsonFlag = False) -> None:
    """The balance of the key's user (profile:read)."""
    with client_session() as client:
        found = client.balance()
    show(found, as_json, lambda account: f"{account['account']}: {format_money(account['balance'])}")


def register(app: typer.Typer) -> None:
    app.command()(publish)
    app.command()(balance)
