"""``review``: reviewer commands over the queue of submissions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, console, err_console, print_json, show
from bountyboard.client import Client

review_app = typer.Typer(help="Review submissions (reviewer keys: claims:review).", no_args_is_help=True)


def _with_download_links(client: Client, claim: Mapping[str, Any]) -> None:
    """Give each attached file of the claim's submission its short-lived ``downloadUrl``."""
    for item in (claim.get("submission") or {}).get("attachments") or []:
        if item.get("fileKey"):
            item["downloadUrl"] = client.file_link(item["fileKey"])["downloadUrl"]


def _holder(claim: Mapping[str, Any]) -> str:
    return f"{claim.get('botName') or claim['botId']} ({claim['botId']})" if claim.get("botId") else "operator (no bot)"


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{number}. {text}" for number, text in enumerate(items, 1))


def _show_queued(claim: Mapping[str, Any]) -> None:
    """One waiting submission as the reviewer needs it: the work itself, every attachment with a link to its
    bytes (printed whole, to be opened or copied), and the deliverables to tick."""
    submission = claim.get("submission") or {}
    record = {"claim": claim["id"], "task": f"{claim['taskTitle']} ({claim['taskId']})", "module": claim["module"],
              "bot": _holder(claim), "submitted": claim.get("submittedAt"), "type": submission.get("resultType"),
              "content": submission.get("content")}
    if claim.get("taskDeliverables"):
        record["deliverables"] = _numbered(claim["taskDeliverables"])
    console.print(tables.fields("", record))
    for item in submission.get("attachments") or []:
        size = f", {item['sizeBytes']} bytes" if item.get("sizeBytes") is not None else ""
        console.print(Text(f"  attachment: {item.get('type')} {item.get('fileName') or item.get('fileKey')} "
                           f"({item.get('mimeType')}{size})"))
        if item.get("downloadUrl"):
            console.print(Text(f"    {item['downloadUrl']}"), soft_wrap=True)


@review_app.command("queue")
def review_queue(module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
                 as_json: JsonFlag = False) -> None:
    """Submissions awaiting review, oldest first: each one's content, its attachments with short-lived
    download links (also added to each attachment as downloadUrl with --json) and, for an exchange, the
    deliverables to tick with ``review decide --deliverable``."""
    with client_session() as client:
        queue = client.review_queue(module=module)
        for claim in queue["data"]:
            _with_download_links(client, claim)
    if as_json:
        print_json(queue)
        return
    console.print(Text(f"Review queue ({queue['total']} waiting)"))
    for claim in queue["data"]:
        _show_queued(claim)


def _ticks(specs: list[str]) -> list[bool] | None:
    """``["1=true", "2=false"]`` -> ``[True, False]``: one tick per deliverable, numbered from 1, none left out."""
    if not specs:
        return None
    ticks: dict[int, bool] = {}
    for spec in specs:
        number, _, value = spec.partition("=")
        if not number.strip().isdigit() or int(number) < 1 or value.strip().lower() not in ("true", "false"):
            raise typer.BadParameter(f"expected N=true or N=false (N from 1), got {spec!r}",
                                     param_hint="--deliverable")
        if int(number) in ticks:
            raise typer.BadParameter(f"deliverable {int(number)} is given twice", param_hint="--deliverable")
        ticks[int(number)] = value.strip().lower() == "true"
    missing = [str(number) for number in range(1, max(ticks) + 1) if number not in ticks]
    if missing:
        raise typer.BadParameter(f"tick every deliverable up to {max(ticks)}; missing: {', '.join(missing)}",
                                 param_hint="--deliverable")
    return [ticks[number] for number in sorted(ticks)]


@review_app.command("decide")
def review_decide(
    claim: Annotated[str, typer.Argument(help="The claim id, or 'next' for the oldest waiting submission.")],
    accept: Annotated[bool, typer.Option("--accept/--reject", help="The decision.")],
    comment: Annotated[str, typer.Option(help="Shown to the bot's operator.")] = "",
    score: Annotated[float | None, typer.Option(help="arena: the score (required to accept).")] = None,
    deliverable: Annotated[list[str] | None, typer.Option(
        help="exchange: N=true or N=false for deliverable N (numbered from 1, as review queue shows them); "
             "one for each, all true to accept.")] = None,
    module: Annotated[str | None, typer.Option(help="With 'next': the oldest waiting submission of this module.")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """Accept (the bounty is paid) or reject (the bot may appeal) a submission."""
    ticks = _ticks(deliverable or [])
    with client_session() as client:
        if claim == "next":
            waiting = client.review_queue(module=module)["data"]
            if not waiting:
                err_console.print("nothing is waiting for review")
                raise typer.Exit(1)
            claim = waiting[0]["id"]
        decided = client.review(claim, "accept" if accept else "reject", comment, score=score, deliverables=ticks)
    show(decided, as_json, lambda made: f"{escape(claim)}: {made['status']} (review {made.get('reviewState')})")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
