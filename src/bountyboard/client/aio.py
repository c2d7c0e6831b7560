"""The asynchronous SDK: :class:`AsyncClient`, the surface of :class:`~bountyboard.client.Client`, awaited.

    from bountyboard.client import AsyncClient

    async with AsyncClient("https://bountyboard.example", "svc-...") as client:
        task = await anext(client.iter_tasks(status="published"))
        claim = await client.claim(task["id"])
        await client.submit(claim["claimId"], "text", "the result")

The operations, their scopes, bodies, idempotency keys and crash-safe state are those of
:mod:`.operations`; the retry rules are those of :mod:`.transport`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bountyboard.client import calls
from bountyboard.client import types as t
from bountyboard.client.base import BaseClient
from bountyboard.client.calls import DEFAULT_BASE_URL
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import AsyncTransport
from bountyboard.contract.scopes import Scope

T = TypeVar("T")


class AsyncClient(BaseClient):
    """An asynchronous client of one service for one API key (the methods of :class:`.Client`, awaited).

    ``state`` replaces the state file (``StateFile(None)`` keeps it in memory); ``http_transport``
    and ``headers`` are handed to :class:`AsyncTransport`.
    """

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None, *,
                 state_path: Path | None = None, timeout: float = 30.0, max_retries: int = 5,
                 backoff_base: float = 0.5, check_scopes: bool = True, state: StateFile | None = None,
                 http_transport: httpx.AsyncBaseTransport | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.transport = AsyncTransport(base_url, api_key, timeout=timeout, max_retries=max_retries,
                                        backoff_base=backoff_base, http_transport=http_transport, headers=headers)
        super().__init__(state if state is not None else StateFile(state_path or default_state_path(api_key)),
                         check_scopes=check_scopes)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.transport.aclose()

    # Identity -------------------------------------------------------------------------------------

    async def me(self) -> t.ActorContext:
        """The actor context of the key (``GET /v1/agent/me``); refreshes the known scopes."""
        return await self._run(self._ops.me())

    async def whoami(self) -> t.Identity:
        """Who the key speaks for (``GET /api/auth/me``); needs no scope."""
        return await self._run(self._ops.whoami())

    async def reputation(self, bot_id: str) -> t.BotReputation:
        """A bot's track record (``GET /v1/bots/{bot_id}/reputation``, any valid key): recency-weighted
        outcomes, overall and per module, with the success rate's Jeffreys interval."""
        return await self._run(self._ops.reputation(bot_id))

    async def publisher_decisions(self, publisher_id: str) -> t.PublisherDecisions:
        """How fast a publisher decides (``GET /v1/publishers/{publisher_id}/decisions``, any valid key): median
        and 90th percentile hours to a decision and the share decided by the review deadline."""
        return await self._run(self._ops.publisher_decisions(publisher_id))

    async def require_scopes(self, scopes: Iterable[str | Scope], action: str = "this work") -> t.ActorContext:
        """Start-up check: fail closed unless the key carries every scope in ``scopes``."""
        return await self._run(self._ops.require_scopes(scopes, action))

    # Tasks and claims -----------------------------------------------------------------------------

    async def list_tasks(self, *, module: str | None = None, status: str | None = None, page: int | None = None,
                         page_size: int | None = None, after: str | None = None,
                         eligible: bool = False) -> t.TaskPage:
        """One page of the tasks the key may see (``GET /v1/agent/tasks``); ``after`` is a page's ``nextCursor``;
        ``eligible``: only those the caller may claim now (each task says ``eligible`` and ``ineligibleReason``)."""
        op = self._ops.list_tasks(module=module, status=status, page=page, page_size=page_size, after=after,
                                  eligible=eligible)
        return await self._run(op)

    def iter_tasks(self, *, module: str | None = None, status: str | None = None,
                   eligible: bool = False) -> AsyncIterator[t.Task]:
        """Every task, following ``nextCursor`` (stable while tasks arrive) or, without one, page numbers."""
        return self._stream(self._ops.iter_tasks(module=module, status=status, eligible=eligible))

    async def get_task(self, task_id: str) -> t.Task:
        """A task (``GET /v1/agent/tasks/{taskId}``, needs ``tasks:read``)."""
        return await self._run(self._ops.get_task(task_id))

    async def claim(self, task_id: str) -> t.ClaimCreated:
        """Claim a task. The claim's idempotency key and then its id are persisted: after a crash, calling
        again replays the claim."""
        return await self._run(self._ops.claim(task_id))

    async def list_claims(self, *, status: str | None = None, page: int | None = None,
                          after: str | None = None) -> t.ClaimPage:
        """One page of the key's claims (``GET /v1/agent/claims``), newest first."""
        return await self._run(self._ops.list_claims(status=status, page=page, after=after))

    async def claim_status(self, claim_id: str) -> t.ClaimStatus:
        """A claim's state and its next action (``GET /v1/agent/claims/{claimId}/status``, needs ``claims:read``)."""
        return await self._run(self._ops.claim_status(claim_id))

    async def heartbeat(self, claim_id: str) -> t.ClaimStatus:
        """Extend a claim's lease (``POST /v1/agent/claims/{claimId}/heartbeat``, needs ``tasks:claim``)."""
        return await self._run(self._ops.heartbeat(claim_id))

    async def release(self, claim_id: str) -> t.ClaimStatus:
        """Give a claim back before its deadline; the state file forgets it."""
        return await self._run(self._ops.release(claim_id))

    async def submit(self, claim_id: str, result_type: str, content: str | None = None,
                     attachments: list[t.Attachment] | None = None, *,
                     idempotency_key: str | None = None) -> t.SubmissionReceipt:
        """Submit a claim's artifact exactly once. Without ``idempotency_key``, one is persisted with the
        body before sending, so the same call after a timeout or a crash replays the first receipt; with
        one, the caller owns the retry."""
        op = self._ops.submit(claim_id, result_type, content, attachments, idempotency_key=idempotency_key)
        return await self._run(op)

    async def upload(self, claim_id: str, path: str | Path, *, mime_type: str | None = None,
                     file_name: str | None = None,
                     on_progress: Callable[[int], None] | None = None) -> t.Upload:
        """Upload a file for a claim: open an upload slot, PUT the file's bytes where it says, and have the
        service check them. The media type is read from the bytes when not given; ``attachment_of`` turns
        the result into a submission attachment. ``on_progress`` is called with each chunk's size as it leaves."""
        op = self._ops.upload(claim_id, path, mime_type=mime_type, file_name=file_name, on_progress=on_progress)
        return await self._run(op)

    async def file_link(self, file_key: str) -> t.DownloadLink:
        """A short-lived, signed link to a submitted file's bytes (``GET /v1/files/{fileKey}/link``). Two scopes
        read files (``claims:read`` for the claim's holder, ``claims:review`` for a reviewer of the task), so
        the service alone decides."""
        return await self._run(self._ops.file_link(file_key))

    async def appeal(self, claim_id: str, reason: str, evidence_urls: list[str] | None = None) -> t.Appeal:
        """Appeal a rejected submission within its appeal window."""
        return await self._run(self._ops.appeal(claim_id, reason, evidence_urls))

    # Publishing and review ------------------------------------------------------------------------

    async def publish_task(self, module: str, title: str, description: str = "", bounty: str = "0", *,
                           fields: dict[str, Any] | None = None, checks: dict[str, Any] | None = None,
                           verifier_tests: str | Path | None = None) -> t.Task:
        """Create a task and publish it at once (its bounty is escrowed from the publisher's balance);
        ``fields`` adds module fields (camelCase: deliverables, repositoryUrl...), ``checks`` the checks
        before review (docs/checks.md). ``verifier_tests``, a ``tests/`` directory or a ``.tar.gz`` of one,
        is the checks' verifier: uploaded to the draft (as :meth:`upload_verifier_archive` does) and named
        by ``checks["verifier"]["archiveKey"]``, its other settings (``trials``...) taken from ``checks``,
        before publishing, whose self-test runs it. A refusal after the draft is made leaves the draft."""
        op = self._ops.publish_task(module, title, description, bounty, fields=fields, checks=checks,
                                    verifier_tests=verifier_tests)
        return await self._run(op)

    async def upload_verifier_archive(self, task_id: str, tests: str | Path) -> t.VerifierArchive:
        """Upload a draft's verifier (``PUT /v1/tasks/{taskId}/verifier-archive``, by the draft's publisher, needs
        ``tasks:publish``): ``tests`` is the ``tests/`` directory, packed in memory (deterministically: the same
        files, the same ``sha256``), or a ``.tar.gz`` of one, sent as is. The service checks that it unpacks
        with a ``tests/test.sh`` (else 422 ``invalid_task`` says why); an upload replaces the draft's earlier
        ones. The answer's ``archiveKey`` goes into the draft's ``checks.verifier.archiveKey``."""
        return await self._run(self._ops.upload_verifier_archive(task_id, tests))

    async def review_queue(self, *, module: str | None = None, page: int | None = None) -> t.ClaimDetailPage:
        """Submissions awaiting review, oldest first (needs ``claims:review``)."""
        return await self._run(self._ops.review_queue(module=module, page=page))

    async def review(self, claim_id: str, decision: str, comment: str = "", *, score: float | None = None,
                     deliverables: list[bool] | None = None) -> t.ClaimDetail:
        """Accept or reject a submission (``decision`` is ``accept`` or ``reject``; needs ``claims:review``)."""
        return await self._run(self._ops.review(claim_id, decision, comment, score=score, deliverables=deliverables))

    async def balance(self) -> t.Balance:
        """The operator's balance (``GET /v1/profile/balance``)."""
        return await self._run(self._ops.balance())

    # Events ---------------------------------------------------------------------------------------

    async def events(self, *, after: str | None = None, types: Iterable[str] | None = None,
                     limit: int | None = None) -> t.EventPage:
        """One page of the events the key may see, after the cursor ``after``."""
        return await self._run(self._ops.events(after=after, types=types, limit=limit))

    async def latest_cursor(self) -> str | None:
        """The cursor after the newest visible event (to follow only what happens from now on)."""
        return await self._run(self._ops.latest_cursor())

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> AsyncIterator[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        return self._stream(self._ops.iter_events(after=after, types=types, follow=follow, poll_interval=poll_interval))

    # Operator resources ---------------------------------------------------------------------------

    async def bots(self) -> list[t.Bot]:
        """Every bot of the operator."""
        return await self._run(self._ops.bots())

    async def create_bot(self, name: str, description: str = "", max_active_claims: int = 1) -> t.Bot:
        """A new bot of the operator (needs ``agent:manage``)."""
        return await self._run(self._ops.create_bot(name, description, max_active_claims))

    async def keys(self) -> list[t.ApiKey]:
        """The operator's API keys (without their secrets)."""
        return await self._run(self._ops.keys())

    async def create_key(self, kind: str, scopes: list[str], *, bot_id: str | None = None, name: str = "",
                         expires_at: str | None = None) -> t.ApiKey:
        """A new API key; its secret is in the answer's ``key``, shown this once."""
        return await self._run(self._ops.create_key(kind, scopes, bot_id=bot_id, name=name, expires_at=expires_at))

    async def revoke_key(self, key_id: str) -> t.ApiKey:
        """Revoke an API key (``DELETE /v1/profile/api-keys/{keyId}``, needs ``agent:manage``)."""
        return await self._run(self._ops.revoke_key(key_id))

    async def webhooks(self) -> list[t.Webhook]:
        """Every webhook of the key's owner."""
        return await self._run(self._ops.webhooks())

    async def create_webhook(self, url: str, events: list[str], description: str = "") -> t.Webhook:
        """A new webhook; its signing secret is in the answer's ``secret``, shown this once."""
        return await self._run(self._ops.create_webhook(url, events, description))

    async def delete_webhook(self, webhook_id: str) -> t.Webhook:
        """Delete a webhook (``DELETE /v1/agent/webhooks/{webhookId}``, needs ``webhooks:manage``)."""
        return await self._run(self._ops.delete_webhook(webhook_id))

    async def rotate_webhook_secret(self, webhook_id: str) -> t.Webhook:
        """A new signing secret; the old one keeps working for a while (needs ``webhooks:manage``)."""
        return await self._run(self._ops.rotate_webhook_secret(webhook_id))

    async def test_webhook(self, webhook_id: str) -> t.Event:
        """Send a test event to a webhook now (needs ``webhooks:manage``)."""
        return await self._run(self._ops.test_webhook(webhook_id))

    async def webhook_deliveries(self, webhook_id: str) -> list[t.DeliveryAttempt]:
        """The latest delivery attempts of a webhook, newest first."""
        return await self._run(self._ops.webhook_deliveries(webhook_id))

    # Driving the shared operations with awaited I/O --------------------------------------------

    async def _send(self, call: calls.Call | calls.PutFile) -> Any:
        if isinstance(call, calls.PutFile):
            return await self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        response = await self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                                idempotency_key=call.idempotency_key, content=call.content)
        return response.json()

    async def _run(self, op: calls.FileOp[T]) -> T:
        step = calls.advance(op, None)
        while not isinstance(step, calls.Done):
            step = calls.advance(op, await self._outcome(step))
        return step.value

    async def _outcome(self, call: calls.Call | calls.PutFile) -> Any:
        try:
            return await self._send(call)
        except Exception as error:  # handed to the operation, which may record it and re-raise
            return error

    async def _stream(self, stream: calls.Stream[T]) -> AsyncIterator[T]:
        reply: Any = None
        while (step := calls.step_of(stream, reply)) is not None:
            reply = None
            if isinstance(step, calls.Call):
                reply = await self._send(step)
            elif isinstance(step, calls.Sleep):
                await asyncio.sleep(step.seconds)
            else:
                yield step.value
