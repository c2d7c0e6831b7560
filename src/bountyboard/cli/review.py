"""``review``: reviewer commands over the queue of submissions."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, err_console, show

review_app = typer.Typer(help="Review submissions (reviewer keys: claims:review).", no_args_is_help=True)


@review_app.command("queue")
def review_queue(module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
                 as_json: JsonFlag = False) -> None:
    """Submissions awaiting review, oldest first."""
    with client_session() as client:
        queue = client.review_queue(module=module)
    show(queue, as_json, lambda waiting: tables.table(
        f"Review queue ({waiting['total']} waiting)", ["claim", "task", "type", "submitted"],
        [[claim["id"], claim["taskId"], (claim.get("submission") or {}).get("resultType"),
          (claim.get("submission") or {}).get("submittedAt")] for claim in waiting["data"]]))


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
    show(decided, as_json, lambda made: f"{escape(claim)}: {made['status']} (review {made.get('reviewState')})")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
