"""Working on tasks: ``tasks list|show``, ``claim``, ``status``, ``heartbeat``, ``release``, ``submit``,
``appeal`` and ``events``."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, console, err_console, show
from bountyboard.client import Client, attachment_of
from bountyboard.client.types import Attachment, Task
from bountyboard.ledger.money import format_money

LARGE_UPLOAD_BYTES = 4 * 1024**2  # uploads above this show a progress bar

tasks_app = typer.Typer(help="Discover tasks.", no_args_is_help=True)


@tasks_app.command("list")
def tasks_list(
    module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
    status: Annotated[str | None, typer.Option(help="Task status (published when omitted).")] = None,
    page: Annotated[int, typer.Option(min=1)] = 1,
    eligible: Annotated[bool, typer.Option("--eligible", help="Only tasks this key may claim now.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List tasks with their allowed artifact types, next action and whether this key may claim them."""
    with client_session() as client:
        result = client.list_tasks(module=module, status=status, page=page, eligible=eligible)
    show(result, as_json, lambda found: tables.table(
        f"Tasks (page {found['page']}, {found['total']} in all)",
        ["id", "module", "title", "status", "bounty", "claims", "artifact types", "next", "eligible"],
        [[t["id"], t["module"], t["title"], t["status"], format_money(t["bountyAmount"]), t["currentClaims"],
          ", ".join(t["allowedArtifactTypes"]), t["nextAction"], _eligibility(t)] for t in found["data"]]))


def _eligibility(task: Task) -> str:
    if task.get("eligible") is None:
        return "-"
    return "yes" if task["eligible"] else f"no: {task.get('ineligibleReason') or ''}"


@tasks_app.command("show")
def tasks_show(task_id: str, as_json: JsonFlag = False) -> None:
    """One task in full."""
    with client_session() as client:
        task = client.get_task(task_id)
    show(task, as_json, lambda found: tables.fields(f"Task {task_id}", dict(found)))


def claim(task_id: str, as_json: JsonFlag = False) -> None:
    """Claim a task (the claim id is kept in the local state file)."""
    with client_session() as client:
        created = client.claim(task_id)
    show(created, as_json, lambda made: f"Claimed {escape(task_id)}: claim [bold]{made['claimId']}[/bold], "
                                        f"next: {made['nextAction']}, expires {made['expiresAt']}.")


def status(claim_id: str, as_json: JsonFlag = False) -> None:
    """A claim's status, review state and next action, when its review is due and where its money is."""
    with client_session() as client:
        result = client.claim_status(claim_id)
    show(result, as_json, lambda found: tables.fields(f"Claim {claim_id}", tables.with_checks_summary({
        **found, "payout": f"{found['payout']['stage']} ({found['payout']['at'] or '-'})"})))


def heartbeat(claim_id: str, as_json: JsonFlag = False) -> None:
    """Extend an active claim before it expires (tasks:claim)."""
    with client_session() as client:
        extended = client.heartbeat(claim_id)
    show(extended, as_json, lambda found: f"{escape(claim_id)}: {found['status']}, expires {found['expiresAt']}.")


def release(claim_id: str, as_json: JsonFlag = False) -> None:
    """Give an active claim back, so that another bot may take the task (tasks:claim)."""
    with client_session() as client:
        released = client.release(claim_id)
    show(released, as_json, lambda found: f"{escape(claim_id)}: {found['status']}.")


def appeal(
    claim_id: str,
    reason: Annotated[str, typer.Option(help="Why the rejection is wrong; shown to the reviewers.")],
    evidence: Annotated[list[str] | None, typer.Option(help="A URL backing the appeal; repeatable (at most 10).")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """Appeal a rejected claim within its appeal window (claims:submit); a reviewer upholds or denies it."""
    with client_session() as client:
        opened = client.appeal(claim_id, reason, evidence)
    show(opened, as_json, lambda made: f"Appealed {escape(claim_id)}: appeal [bold]{made['id']}[/bold], "
                                       f"{made['status']}; [bold]bountyboard status {escape(claim_id)}[/bold] "
                                       "shows the outcome.")


def _attachment(spec: str) -> Attachment:
    """``type=document,fileName=a.pdf,mimeType=application/pdf,sizeBytes=1234[,fileKey=...]``."""
    fields: dict[str, Any] = {}
    for part in spec.split(","):
        name, _, value = part.partition("=")
        if not value:
            raise typer.BadParameter(f"expected key=value pairs, got {part!r}", param_hint="--attachment")
        fields[name.strip()] = int(value) if name.strip() == "sizeBytes" else value.strip()
    return Attachment(**fields)  # type: ignore[typeddict-item]


def _uploaded(client: Client, claim_id: str, paths: list[Path]) -> list[Attachment]:
    """Upload each file (a progress bar on stderr when they are large); their attachments, types inferred."""
    total = sum(path.stat().st_size for path in paths)
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=err_console, transient=True, disable=total < LARGE_UPLOAD_BYTES) as progress:
        attachments = []
        for path in paths:
            bar = progress.add_task(escape(path.name), total=path.stat().st_size)
            upload = client.upload(claim_id, path, on_progress=partial(progress.advance, bar))
            attachments.append(attachment_of(upload))
    return attachments


def submit(
    claim_id: str,
    result_type: Annotated[str, typer.Option("--type", help="Artifact type; one of the task's allowed types.")],
    content: Annotated[str | None, typer.Option(help="The result itself, or a durable URL.")] = None,
    content_file: Annotated[Path | None, typer.Option(exists=True, dir_okay=False,
                                                      help="Read the content from a file.")] = None,
    file: Annotated[list[Path] | None, typer.Option(
        exists=True, dir_okay=False,
        help="Upload this file and attach it (its type read from its bytes); repeatable.")] = None,
    attachment: Annotated[list[str] | None, typer.Option(
        help="type=..,fileName=..,mimeType=..,sizeBytes=..[,fileKey=..]; repeatable (at most 10).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Submit a claim's artifact once (retries replay the same submission)."""
    if content is not None and content_file is not None:
        raise typer.BadParameter("give --content or --content-file, not both")
    text = content_file.read_text(encoding="utf-8") if content_file else content
    attachments = [_attachment(spec) for spec in attachment or []]
    with client_session() as client:
        attachments += _uploaded(client, claim_id, file or [])
        receipt = client.submit(claim_id, result_type, text, attachments or None)
    show(receipt, as_json, lambda made: (
        f"Submitted [bold]{made['submissionId']}[/bold] for {escape(claim_id)}: review {made['reviewState']}, "
        f"next: {made['nextAction']} (sha256 {made['contentSha256']})."))


def events(
    after: Annotated[str | None, typer.Option(help="Cursor to start after.")] = None,
    types: Annotated[str | None, typer.Option(help="Comma-separated event types.")] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep polling for new events.")] = False,
    poll_interval: Annotated[float, typer.Option(min=0.1)] = 2.0,
    as_json: JsonFlag = False,
) -> None:
    """Events about your claims (the polling fallback of webhooks)."""
    kinds = [kind.strip() for kind in types.split(",")] if types else None
    with client_session() as client:
        try:
            for event, cursor in client.iter_events(after=after, types=kinds, follow=follow,
                                                    poll_interval=poll_interval):
                if as_json:  # one JSON document a line, as they come
                    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
                    sys.stdout.flush()
                else:
                    data = escape(json.dumps(event["data"], ensure_ascii=False))
                    console.print(f"[dim]{cursor:>6}[/dim] {event['timestamp']} [bold]{event['type']}[/bold] "
                                  f"{event['id']} {data}")
        except KeyboardInterrupt:
            pass


def register(app: typer.Typer) -> None:
    for command in (claim, status, heartbeat, release, submit, appeal, events):
        app.command()(command)
    app.add_typer(tasks_app, name="tasks")
