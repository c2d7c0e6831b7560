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

from bountyboard.accounts.scopes import Scope
from bountyboard.client import operations
from bountyboard.client import types as t
from bountyboard.client.operations import DEFAULT_BASE_URL, Operations
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import AsyncTransport

T = TypeVar("T")


class AsyncClient:
    """An asynchronous client of one service for one API key.

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
        self.state = state if state is not None else StateFile(state_path or default_state_path(api_key))
        self._ops = Operations(self.state, check_scopes=check_scopes)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.transport.aclose()

    # Driving the shared operations with awaited I/O --------------------------------------------

    async def _send(self, call: operations.Call | operations.PutFile) -> Any:
        if isinstance(call, operations.PutFile):
            return await self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        response = await self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                                idempotency_key=call.idempotency_key)
        return response.json()

    async def _run(self, op: operations.FileOp[T]) -> T:
        step = operations.advance(op, None)
        while not isinstance(step, operations.Done):
            step = operations.advance(op, await self._outcome(step))
        return step.value

    async def _outcome(self, call: operations.Call | operations.PutFile) -> Any:
        try:
            return await self._send(call)
        except Exception as error:  # handed to the operation, which may record it and re-raise
            return error

    async def _stream(self, stream: operations.Stream[T]) -> AsyncIterator[T]:
        reply: Any = None
        while (step := operations.step_of(stream, reply)) is not None:
            reply = None
            if isinstance(step, operations.Call):
                reply = await self._send(step)
            elif isinstance(step, operations.Sleep):
                await asyncio.sleep(step.seconds)
            else:
                yield step.value

    # Identity ------------------------------------------------------------------------------------

    async def me(self) -> t.ActorContext:
        """The actor context of the key (``GET /v1/agent/me``); refreshes the known scopes."""
        return await self._run(self._ops.me())

    async def whoami(self) -> dict[str, Any]:
        return await self._run(self._ops.whoami())

    async def require_scopes(self, scopes: Iterable[str | Scope], action: str = "this work") -> t.ActorContext:
        """Start-up check: fail closed unless the key carries every scope in ``scopes``."""
        return await self._run(self._ops.require_scopes(scopes, action))

    # Tasks and claims ----------------------------------------------------------------------------

    async def list_tasks(self, *, module: str | None = None, status: str | None = None, page: int | None = None,
                         page_size: int | None = None, after: str | None = None) -> t.TaskPage:
        return await self._run(self._ops.list_tasks(module, status, page, page_size, after))

    def iter_tasks(self, *, module: str | None = None, status: str | None = None) -> AsyncIterator[t.Task]:
        return self._stream(self._ops.iter_tasks(module, status))

    async def get_task(self, task_id: str) -> t.Task:
        return await self._run(self._ops.get_task(task_id))

    async def claim(self, task_id: str) -> t.ClaimCreated:
        """Claim a task. The claim id is persisted; after a crash, calling again replays the claim."""
        return await self._run(self._ops.claim(task_id))

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return dict(self.state.get("claims", {}))

    def forget_claim(self, claim_id: str) -> None:
        self._ops.forget_claim(claim_id)

    async def list_claims(self, *, status: str | None = None, page: int | None = None,
                          after: str | None = None) -> t.ClaimPage:
        return await self._run(self._ops.list_claims(status, page, after))

    async def claim_status(self, claim_id: str) -> t.ClaimStatus:
        return await self._run(self._ops.claim_status(claim_id))

    async def heartbeat(self, claim_id: str) -> t.ClaimStatus:
        return await self._run(self._ops.heartbeat(claim_id))

    async def release(self, claim_id: str) -> t.ClaimStatus:
        return await self._run(self._ops.release(claim_id))

    async def submit(self, claim_id: str, result_type: str, content: str | None = None,
                     attachments: list[t.Attachment] | None = None, *,
                     idempotency_key: str | None = None) -> t.SubmissionReceipt:
        """Submit a claim's artifact exactly once (see :meth:`Operations.submit`)."""
        return await self._run(self._ops.submit(claim_id, result_type, content, attachments, idempotency_key))

    async def upload(self, claim_id: str, path: str | Path, *, mime_type: str | None = None,
                     file_name: str | None = None, on_progress: Callable[[int], None] | None = None) -> t.Upload:
        """Upload a file for a claim (see :meth:`Operations.upload`)."""
        return await self._run(self._ops.upload(claim_id, Path(path), mime_type, file_name, on_progress))

    async def appeal(self, claim_id: str, reason: str, evidence_urls: list[str] | None = None) -> dict[str, Any]:
        return await self._run(self._ops.appeal(claim_id, reason, evidence_urls))

    # Publishing and review -----------------------------------------------------------------------

    async def publish_task(self, module: str, title: str, description: str = "", bounty: str = "0", *,
                           fields: dict[str, Any] | None = None) -> t.Task:
        """Create and publish a task; ``fields`` adds module fields (camelCase: deliverables, repositoryUrl...)."""
        return await self._run(self._ops.publish_task(module, title, description, bounty, fields))

    async def review_queue(self, *, module: str | None = None, page: int | None = None) -> dict[str, Any]:
        return await self._run(self._ops.review_queue(module, page))

    async def review(self, claim_id: str, decision: str, comment: str = "", *, score: float | None = None,
                     deliverables: list[bool] | None = None) -> dict[str, Any]:
        return await self._run(self._ops.review(claim_id, decision, comment, score, deliverables))

    async def balance(self) -> dict[str, Any]:
        return await self._run(self._ops.balance())

    # Events --------------------------------------------------------------------------------------

    async def events(self, *, after: str | None = None, types: Iterable[str] | None = None,
                     limit: int | None = None) -> t.EventPage:
        return await self._run(self._ops.events(after, types, limit))

    async def latest_cursor(self) -> str | None:
        """The cursor after the newest visible event (to follow only what happens from now on)."""
        return await self._run(self._ops.latest_cursor())

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> AsyncIterator[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        return self._stream(self._ops.iter_events(after, types, follow, poll_interval))

    # Operator resources --------------------------------------------------------------------------

    async def bots(self) -> list[t.Bot]:
        return await self._run(self._ops.bots())

    async def create_bot(self, name: str, description: str = "", max_active_claims: int = 1) -> t.Bot:
        return await self._run(self._ops.create_bot(name, description, max_active_claims))

    async def keys(self) -> list[t.ApiKey]:
        return await self._run(self._ops.keys())

    async def create_key(self, kind: str, scopes: list[str], *, bot_id: str | None = None, name: str = "",
                         expires_at: str | None = None) -> t.ApiKey:
        return await self._run(self._ops.create_key(kind, scopes, bot_id, name, expires_at))

    async def revoke_key(self, key_id: str) -> t.ApiKey:
        return await self._run(self._ops.revoke_key(key_id))

    async def webhooks(self) -> list[t.Webhook]:
        return await self._run(self._ops.webhooks())

    async def create_webhook(self, url: str, events: list[str], description: str = "") -> t.Webhook:
        return await self._run(self._ops.create_webhook(url, events, description))

    async def delete_webhook(self, webhook_id: str) -> t.Webhook:
        return await self._run(self._ops.delete_webhook(webhook_id))

    async def rotate_webhook_secret(self, webhook_id: str) -> t.Webhook:
        return await self._run(self._ops.rotate_webhook_secret(webhook_id))

    async def test_webhook(self, webhook_id: str) -> t.Event:
        return await self._run(self._ops.test_webhook(webhook_id))

    async def webhook_deliveries(self, webhook_id: str) -> list[dict[str, Any]]:
        return await self._run(self._ops.webhook_deliveries(webhook_id))
