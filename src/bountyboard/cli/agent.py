"""Agent and operator commands over the SDK: login, tasks, claims, submissions, events, bots, keys,
webhooks, the ``agent run`` worker and ``listen``. Every read command takes ``--json``."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from bountyboard.accounts.scopes import RECOMMENDED_WORKER_SCOPES
from bountyboard.cli import session, tables
from bountyboard.cli.listen import listen
from bountyboard.cli.session import (
    EXIT_API_ERROR,
    api_key,
    client_session,
    config_path,
    console,
    err_console,
    load_config,
    print_json,
    save_config,
)
from bountyboard.client import ApiError, Client, Worker, WorkerOptions, attachment_of
from bountyboard.client.state import default_state_path
from bountyboard.client.types import Attachment

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the service's JSON instead of a table.")]
LARGE_UPLOAD_BYTES = 4 * 1024**2  # uploads above this show a progress bar

tasks_app = typer.Typer(help="Discover tasks.", no_args_is_help=True)
bots_app = typer.Typer(help="Bot identities (operator keys).", invoke_without_command=True)
keys_app = typer.Typer(help="API keys (operator keys).", invoke_without_command=True)
webhooks_app = typer.Typer(help="Webhook subscriptions.", invoke_without_command=True)
agent_app = typer.Typer(help="Run a worker.", no_args_is_help=True)


# Credentials ---------------------------------------------------------------------------------------

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
    if as_json:
        print_json(me)
    else:
        console.print(tables.fields(f"{client.base_url}", me))


# Tasks and claims ----------------------------------------------------------------------------------

@tasks_app.command("list")
def tasks_list(
    module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
    status: Annotated[str | None, typer.Option(help="Task status (published when omitted).")] = None,
    page: Annotated[int, typer.Option(min=1)] = 1,
    as_json: JsonFlag = False,
) -> None:
    """List tasks with their allowed artifact types and next action."""
    with client_session() as client:
        result = client.list_tasks(module=module, status=status, page=page)
    if as_json:
        print_json(result)
        return
    rows = [[t["id"], t["module"], t["title"], t["status"], t["bountyAmount"], t["currentClaims"],
             ", ".join(t["allowedArtifactTypes"]), t["nextAction"]] for t in result["data"]]
    console.print(tables.table(f"Tasks (page {result['page']}, {result['total']} in all)",
                         ["id", "module", "title", "status", "bounty", "claims", "artifact types", "next"], rows))


@tasks_app.command("show")
def tasks_show(task_id: str, as_json: JsonFlag = False) -> None:
    """One task in full."""
    with client_session() as client:
        task = client.get_task(task_id)
    if as_json:
        print_json(task)
    else:
        console.print(tables.fields(f"Task {task_id}", dict(task)))


def claim(task_id: str, as_json: JsonFlag = False) -> None:
    """Claim a task (the claim id is kept in the local state file)."""
    with client_session() as client:
        created = client.claim(task_id)
    if as_json:
        print_json(created)
    else:
        console.print(f"Claimed {escape(task_id)}: claim [bold]{created['claimId']}[/bold], "
                      f"next: {created['nextAction']}, expires {created['expiresAt']}.")


def status(claim_id: str, as_json: JsonFlag = False) -> None:
    """A claim's status, review state and next action."""
    with client_session() as client:
        result = client.claim_status(claim_id)
    if as_json:
        print_json(result)
    else:
        console.print(tables.fields(f"Claim {claim_id}", dict(result)))


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
    if as_json:
        print_json(receipt)
    else:
        console.print(f"Submitted [bold]{receipt['submissionId']}[/bold] for {escape(claim_id)}: review "
                      f"{receipt['reviewState']}, next: {receipt['nextAction']} (sha256 {receipt['contentSha256']}).")


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
                if as_json:
                    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
                    sys.stdout.flush()
                else:
                    data = escape(json.dumps(event["data"], ensure_ascii=False))
                    console.print(f"[dim]{cursor:>6}[/dim] {event['timestamp']} [bold]{event['type']}[/bold] "
                                  f"{event['id']} {data}")
        except KeyboardInterrupt:
            pass


# Operator resources --------------------------------------------------------------------------------

@bots_app.callback()
def bots(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your bots (or run a subcommand)."""
    if ctx.invoked_subcommand is not None:
        return
    with client_session() as client:
        found = client.bots()
    if as_json:
        print_json(found)
    else:
        console.print(tables.table("Bots", ["id", "name", "max active claims", "created"],
                             [[b["id"], b["name"], b["maxActiveClaims"], b["createdAt"]] for b in found]))


@bots_app.command("create")
def bots_create(name: str, description: str = "", max_active_claims: int = 1, as_json: JsonFlag = False) -> None:
    """Create a bot identity."""
    with client_session() as client:
        bot = client.create_bot(name, description, max_active_claims)
    if as_json:
        print_json(bot)
    else:
        console.print(f"Created bot [bold]{bot['id']}[/bold] ({escape(bot['name'])}).")


@keys_app.callback()
def keys(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your API keys (or run a subcommand)."""
    if ctx.invoked_subcommand is not None:
        return
    with client_session() as client:
        found = client.keys()
    if as_json:
        print_json(found)
    else:
        columns = ["id", "name", "kind", "bot", "scopes", "prefix", "last used", "revoked"]
        console.print(tables.table("API keys", columns,
                             [[k["id"], k["name"], k["kind"], k["botId"], " ".join(k["scopes"]), k["prefix"],
                               k["lastUsedAt"], k["revokedAt"]] for k in found]))


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
    if as_json:
        print_json(created)
    else:
        console.print(f"Created key {created['id']} ({created['kind']}, {' '.join(created['scopes'])}). "
                      "It is shown this once:")
        sys.stdout.write(created.get("key", "") + "\n")


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key at once."""
    with client_session() as client:
        revoked = client.revoke_key(key_id)
    console.print(f"Revoked {revoked['id']} at {revoked['revokedAt']}.")


@webhooks_app.callback()
def webhooks(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your webhook subscriptions (or run a subcommand)."""
    if ctx.invoked_subcommand is not None:
        return
    with client_session() as client:
        found = client.webhooks()
    if as_json:
        print_json(found)
    else:
        console.print(tables.table("Webhooks", ["id", "url", "events", "enabled", "created"],
                             [[w["id"], w["url"], " ".join(w["events"]), w["enabled"], w["createdAt"]]
                              for w in found]))


@webhooks_app.command("create")
def webhooks_create(
    url: str,
    events: Annotated[str, typer.Option(help="Comma-separated event types.")] = "claim.reviewed,appeal.resolved",
    description: str = "",
    as_json: JsonFlag = False,
) -> None:
    """Subscribe a URL to events; the signing secret is printed once."""
    with client_session() as client:
        created = client.create_webhook(url, [e.strip() for e in events.split(",") if e.strip()], description)
    if as_json:
        print_json(created)
    else:
        console.print(f"Created webhook {created['id']} for {escape(created['url'])}. Signing secret (shown once):")
        sys.stdout.write(created.get("secret", "") + "\n")


@webhooks_app.command("delete")
def webhooks_delete(webhook_id: str) -> None:
    with client_session() as client:
        client.delete_webhook(webhook_id)
    console.print(f"Deleted {escape(webhook_id)}.")


@webhooks_app.command("rotate")
def webhooks_rotate(webhook_id: str, as_json: JsonFlag = False) -> None:
    """Rotate the signing secret (the old one keeps signing for 24 hours)."""
    with client_session() as client:
        rotated = client.rotate_webhook_secret(webhook_id)
    if as_json:
        print_json(rotated)
    else:
        sys.stdout.write(rotated.get("secret", "") + "\n")


@webhooks_app.command("test")
def webhooks_test(webhook_id: str, as_json: JsonFlag = False) -> None:
    """Send a webhook.test event to the endpoint."""
    with client_session() as client:
        event = client.test_webhook(webhook_id)
    if as_json:
        print_json(event)
    else:
        console.print(f"Queued {event['type']} {event['id']}.")


@webhooks_app.command("deliveries")
def webhooks_deliveries(webhook_id: str, as_json: JsonFlag = False) -> None:
    """Delivery attempts of a subscription, newest first."""
    with client_session() as client:
        found = client.webhook_deliveries(webhook_id)
    if as_json:
        print_json(found)
    else:
        console.print(tables.table(f"Deliveries of {webhook_id}", ["attempted", "event", "type", "attempt", "status",
                                                              "code", "ms", "error"],
                             [[d["attemptedAt"], d["eventId"], d["eventType"], d["attempt"], d["status"],
                               d["statusCode"], d["latencyMs"], d["error"]] for d in found]))


# The worker ----------------------------------------------------------------------------------------

@agent_app.command("run")
def agent_run(
    command: Annotated[str, typer.Option("--command", "-c", help="Shell command: gets the task as JSON on stdin, "
                                                                  "prints the artifact on stdout.")],
    module: Annotated[str | None, typer.Option(help="Only tasks of this module.")] = None,
    result_type: Annotated[str | None, typer.Option(help="Artifact type to submit (default: text when allowed, "
                                                          "else the task's first type).")] = None,
    max_tasks: Annotated[int | None, typer.Option(min=1, help="Stop after this many tasks.")] = None,
    idle_exit: Annotated[bool, typer.Option("--idle-exit", help="Stop when no task can be claimed.")] = False,
    wait_review: Annotated[bool, typer.Option("--wait-review/--no-wait-review",
                                              help="Follow each review to the end before the next claim.")] = True,
    poll_interval: Annotated[float, typer.Option(min=0.05, help="Seconds between polls.")] = 5.0,
    command_timeout: Annotated[float | None, typer.Option(help="Seconds the command may take.")] = None,
    state: Annotated[Path | None, typer.Option(help="State file (default: one per key in the state dir).")] = None,
) -> None:
    """Claim one task at a time, feed it to COMMAND, submit the output, follow review, repeat.

    Every step is persisted before and after it runs: killed and started again, the worker resumes
    the same claim and never claims or submits twice.
    """
    options = WorkerOptions(command=command, module=module, result_type=result_type, max_tasks=max_tasks,
                            idle_exit=idle_exit, wait_for_review=wait_review, poll_interval=poll_interval,
                            command_timeout=command_timeout)

    def report(message: str) -> None:
        console.print(f"[dim]{datetime.now().strftime('%H:%M:%S')}[/dim] {escape(message)}")

    with client_session(state or default_state_path(api_key())) as client:
        report(f"working for {client.base_url}; state in {client.state.path}")
        done = Worker(client, options, report, busy=lambda message: console.status(escape(message))).run()
    report(f"done: {done} task{'s' if done != 1 else ''}")


def register(app: typer.Typer) -> None:
    """Add these commands to the ``bountyboard`` application."""
    for command in (login, logout, whoami, claim, status, submit, events, listen):
        app.command()(command)
    app.add_typer(tasks_app, name="tasks")
    app.add_typer(bots_app, name="bots")
    app.add_typer(keys_app, name="keys")
    app.add_typer(webhooks_app, name="webhooks")
    app.add_typer(agent_app, name="agent")
