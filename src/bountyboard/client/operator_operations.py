"""The SDK's operations on the events feed and on an operator's own resources (bots, keys, webhooks).

Written as those of :mod:`.operations` are (sans I/O generators); :class:`~.operations.Operations` has them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from bountyboard.client import types as t
from bountyboard.client.calls import Call, Item, Op, Sleep, Stream
from bountyboard.client.scoped import ScopedOperations
from bountyboard.contract.pages import PAGE_SIZE_MAX
from bountyboard.contract.scopes import Scope


class OperatorOperations(ScopedOperations):
    """Events and the operator's resources."""

    # Events --------------------------------------------------------------------------------------

    def events(self, *, after: str | None = None, types: Iterable[str] | None = None,
               limit: int | None = None) -> Op[t.EventPage]:
        """One page of the events the key may see, after the cursor ``after``."""
        yield from self._need(Scope.CLAIMS_READ, "reading events")
        params = {"after": after, "types": ",".join(types) if types else None, "limit": limit}
        return cast(t.EventPage, (yield Call("GET", "/v1/agent/events", params)))

    def latest_cursor(self) -> Op[str | None]:
        """The cursor after the newest visible event (to follow only what happens from now on)."""
        cursor: str | None = None
        while True:
            page = yield from self.events(after=cursor, limit=100)
            cursor = page["nextCursor"] or cursor
            if not page["hasMore"]:
                return cursor

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> Stream[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        kinds = list(types) if types else None
        cursor = after
        while True:
            page = yield from self.events(after=cursor, types=kinds, limit=100)
            for event in page["data"]:
                # The feed's cursor is the sequence of the last event returned.
                yield Item((event, str(event["sequence"])))
            cursor = page["nextCursor"] or cursor
            if page["hasMore"]:
                continue
            if not follow:
                return
            yield Sleep(poll_interval)

    # Operator resources --------------------------------------------------------------------------

    def _every(self, path: str) -> Op[list[Any]]:
        """All items of a page-numbered list."""
        items: list[Any] = []
        page = 1
        while True:
            result = yield Call("GET", path, {"page": page, "pageSize": PAGE_SIZE_MAX})
            items.extend(result["data"])
            if not result["hasMore"]:
                return items
            page += 1

    def bots(self) -> Op[list[t.Bot]]:
        """Every bot of the operator."""
        yield from self._need(Scope.AGENT_MANAGE, "listing bots")
        return cast(list[t.Bot], (yield from self._every("/v1/agent/bots")))

    def create_bot(self, name: str, description: str = "", max_active_claims: int = 1) -> Op[t.Bot]:
        """A new bot of the operator (needs ``agent:manage``)."""
        yield from self._need(Scope.AGENT_MANAGE, "creating a bot")
        body = {"name": name, "description": description, "maxActiveClaims": max_active_claims}
        return cast(t.Bot, (yield Call("POST", "/v1/agent/bots", body=body)))

    def keys(self) -> Op[list[t.ApiKey]]:
        """The operator's API keys (without their secrets)."""
        yield from self._need(Scope.PROFILE_READ, "listing API keys")
        return cast(list[t.ApiKey], (yield Call("GET", "/v1/profile/api-keys"))["data"])

    def create_key(self, kind: str, scopes: list[str], *, bot_id: str | None = None, name: str = "",
                   expires_at: str | None = None) -> Op[t.ApiKey]:
        """A new API key; its secret is in the answer's ``key``, shown this once."""
        yield from self._need(Scope.AGENT_MANAGE, "creating an API key")
        body: dict[str, Any] = {"kind": kind, "scopes": scopes, "name": name}
        if bot_id:
            body["botId"] = bot_id
        if expires_at:
            body["expiresAt"] = expires_at
        return cast(t.ApiKey, (yield Call("POST", "/v1/profile/api-keys", body=body)))

    def revoke_key(self, key_id: str) -> Op[t.ApiKey]:
        """Revoke an API key (``DELETE /v1/profile/api-keys/{keyId}``, needs ``agent:manage``)."""
        return self._call(Scope.AGENT_MANAGE, "revoking an API key",
                          "DELETE", "/v1/profile/api-keys/{key_id}", key_id=key_id)

    def webhooks(self) -> Op[list[t.Webhook]]:
        """Every webhook of the key's owner."""
        yield from self._need(Scope.WEBHOOKS_MANAGE, "listing webhooks")
        return cast(list[t.Webhook], (yield from self._every("/v1/agent/webhooks")))

    def create_webhook(self, url: str, events: list[str], description: str = "") -> Op[t.Webhook]:
        """A new webhook; its signing secret is in the answer's ``secret``, shown this once."""
        yield from self._need(Scope.WEBHOOKS_MANAGE, "creating a webhook")
        body = {"url": url, "events": events, "description": description}
        return cast(t.Webhook, (yield Call("POST", "/v1/agent/webhooks", body=body)))

    def delete_webhook(self, webhook_id: str) -> Op[t.Webhook]:
        """Delete a webhook (``DELETE /v1/agent/webhooks/{webhookId}``, needs ``webhooks:manage``)."""
        return self._on_webhook("deleting a webhook", "DELETE", webhook_id)

    def rotate_webhook_secret(self, webhook_id: str) -> Op[t.Webhook]:
        """A new signing secret; the old one keeps working for a while (needs ``webhooks:manage``)."""
        return self._on_webhook("rotating a webhook secret", "POST", webhook_id, "/rotate-secret")

    def test_webhook(self, webhook_id: str) -> Op[t.Event]:
        """Send a test event to a webhook now (needs ``webhooks:manage``)."""
        return self._on_webhook("testing a webhook", "POST", webhook_id, "/test")

    def webhook_deliveries(self, webhook_id: str) -> Op[list[t.DeliveryAttempt]]:
        """The latest delivery attempts of a webhook, newest first."""
        deliveries = yield from self._on_webhook("listing webhook deliveries", "GET", webhook_id, "/deliveries")
        return cast(list[t.DeliveryAttempt], deliveries["data"])

    def _on_webhook(self, action: str, method: str, webhook_id: str, suffix: str = "") -> Op[Any]:
        """One call on one webhook (its path, then ``suffix``): each needs ``webhooks:manage``."""
        return self._call(Scope.WEBHOOKS_MANAGE, action, method, "/v1/agent/webhooks/{webhook_id}" + suffix,
                          webhook_id=webhook_id)
