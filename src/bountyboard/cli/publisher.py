"""Publisher commands: ``publish`` a task and see the key's ``balance``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, show
from bountyboard.client.archive import archive_verifier
from bountyboard.ledger.money import format_money


def _checks_file(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        checks = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise typer.BadParameter(f"{path} is not JSON: {error}", param_hint="--checks") from error
    if not isinstance(checks, dict):
        raise typer.BadParameter(f"{path} holds no JSON object", param_hint="--checks")
    return checks


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
    checks: Annotated[Path | None, typer.Option(
        exists=True, dir_okay=False, metavar="FILE.json",
        help="Checks before review, a JSON object as in docs/checks.md (binding, maxAttempts, rules, verifier, "
             "solution).")] = None,
    verifier_tests: Annotated[Path | None, typer.Option(
        exists=True, metavar="DIR",
        help="The verifier's tests/ directory (with its test.sh), or a .tar.gz of one: uploaded to the draft and "
             "named as the checks' verifier, whose trials and limits --checks gives.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a task and publish it (publisher keys: tasks:publish); with --checks, work is checked before
    review, and with --verifier-tests the verifier runs those tests (its self-test on the checks' solution
    runs before publishing)."""
    if verifier_tests is not None and checks is None:
        raise typer.BadParameter("needs --checks: the verifier's settings and the solution its self-test runs",
                                 param_hint="--verifier-tests")
    extra: dict[str, Any] = {"deliverables": deliverable, "repositoryUrl": repository,
                             "sourceLanguage": source_language, "targetLanguage": target_language,
                             "targetClaimId": target_claim}
    given = _checks_file(checks)
    if verifier_tests is not None:
        try:
            archive_verifier(given)
        except ValueError as error:  # the checks give the verifier's files inline too
            raise typer.BadParameter(str(error), param_hint="--verifier-tests") from error
    with client_session() as client:
        task = client.publish_task(module, title, description, bounty,
                                   fields={name: value for name, value in extra.items() if value},
                                   checks=given, verifier_tests=verifier_tests)
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
