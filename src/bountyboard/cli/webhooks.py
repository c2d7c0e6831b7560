"""``webhooks``: subscriptions, their secrets and delivery attempts."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, console, show, show_listing
from bountyboard.client import Client

webhooks_app = typer.Typer(help="Webhook subscriptions.", invoke_without_command=True)


@webhooks_app.callback()
def webhooks(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List your webhook subscriptions (or run a subcommand)."""
    show_listing(ctx, as_json, Client.webhooks, lambda listed: tables.table(
        "Webhooks", ["id", "url", "events", "enabled", "created"],
        [[w["id"], w["url"], " ".join(w["events"]), w["enabled"], w["createdAt"]] for w in listed]))


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
    show(created, as_json,
         lambda made: f"Created webhook {made['id']} for {escape(made['url'])}. Signing secret (shown once):",
         then_verbatim=created.get("secret", ""))


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
    show(rotated, as_json, None, then_verbatim=rotated.get("secret", ""))


@webhooks_app.command("test")
def webhooks_test(webhook_id: str, as_json: JsonFlag = False) -> None:
    """Send a webhook.test event to the endpoint."""
    with client_session() as client:
        event = client.test_webhook(webhook_id)
    show(event, as_json, lambda queued: f"Queued {queued['type']} {queued['id']}.")


@webhooks_app.command("deliveries")
def webhooks_deliveries(webhook_id: str, as_json: JsonFlag = False) -> None:
    """Delivery attempts of a subscription, newest first."""
    with client_session() as client:
        found = client.webhook_deliveries(webhook_id)
    show(found, as_json, lambda listed: tables.table(
        f"Deliveries of {webhook_id}", ["attempted", "event", "type", "attempt", "status", "code", "ms", "error"],
        [[d["attemptedAt"], d["eventId"], d["eventType"], d["attempt"], d["status"], d["statusCode"],
          d["latencyMs"], d["error"]] for d in listed]))
