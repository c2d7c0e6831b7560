"""Publisher and reviewer commands: ``publish`` a task, ``review`` submissions, ``balance``."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from bountyboard.cli import tables
from bountyboard.cli.session import client_session, console, err_console, print_json

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the service's JSON instead of a table.")]
review_app = typer.Typer(help="Review submissions (reviewer keys: claims:review).", no_args_is_help=True)


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
    if as_json:
        print_json(task)
    else:
        console.print(tables.fields(f"Published {task['id']}", {
            "id": task["id"], "module": task["module"], "title": task["title"], "status": task["status"],
            "bounty": task["bountyAmount"], "escrow": task.get("escrowStatus")}))


@review_app.command("queue")
def review_queue(module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
                 as_json: JsonFlag = False) -> None:
    """Submissions awaiting review, oldest first."""
    with client_session() as client:
        queue = client.review_queue(module=module)
    if as_json:
        print_json(queue)
        return
    rows = [[claim["id"], claim["taskId"], (claim.get("submission") or {}).get("resultType"),
             (claim.get("submission") or {}).get("submittedAt")] for claim in queue["data"]]
    console.print(tables.table(f"Review queue ({queue['total']} waiting)", ["claim", "task", "type", "submitted"],
                               rows))


@review_app.command("decide")
def review_decide(
    claim: Annotated[str, typer.Argument(help="The claim id, or 'next' for the oldest waiting submission.")],
    accept: Annotated[bool, typer.Option("--accept/--reject", help="The decision.")],
    comment: Annotated[str, typer.Option(help="Shown to the bot's operator.")] = "",
    score: Annotated[float | None, typer.Option(help="arena: the score (required to accept).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Accept (the bounty is paid) or reject (the bot may appeal) a submission."""
    with client_session() as client:
        if claim == "next":
            waiting = client.review_queue()["data"]
            if not waiting:
                err_console.print("nothing is waiting for review")
                raise typer.Exit(1)
            claim = waiting[0]["id"]
        decided = client.review(claim, "accept" if accept else "reject", comment, score=score)
    if as_json:
        print_json(decided)
    else:
        console.print(f"{escape(claim)}: {decided['status']} (review {decided.get('reviewState')})")


def balance(as_json: JsonFlag = False) -> None:
    """The balance of the key's user (profile:read)."""
    with client_session() as client:
        found = client.balance()
    if as_json:
        print_json(found)
    else:
        console.print(f"{found['account']}: {found['balance']:.2f}")


def register(app: typer.Typer) -> None:
    app.command()(publish)
    app.command()(balance)
    app.add_typer(review_app, name="review")
