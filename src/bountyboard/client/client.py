"""The synchronous SDK: one method per operation of the agent interface, following the caller rules.

- Scopes fail closed: before its first call that needs a scope, the client reads ``/v1/agent/me``
  once; a method whose scope the key lacks raises :class:`MissingScopeError` without calling the
  service. :meth:`Client.require_scopes` checks a whole set at start-up.
- Every POST carries an ``Idempotency-Key`` and is retried with backoff (see :mod:`.transport`).
- Claims and submissions are crash-safe: the idempotency key of a claim or submission is written
  to the state file before the request leaves, and the claim id as soon as it arrives. Calling
  :meth:`Client.claim` or :meth:`Client.submit` again after a crash, with the same arguments,
  replays the first attempt instead of claiming or submitting twice.

The operations themselves live in :mod:`.operations`, shared with :class:`~bountyboard.client.AsyncClient`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from bountyboard.accounts.scopes import Scope
from bountyboard.client import operations
from bountyboard.client import types as t
from bountyboard.client.operations import DEFAULT_BASE_URL, Operations
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import Transport

T = TypeVar("T")


class Client:
    """A synchronous client of one service for one API key."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None, *,
                 state_path: Path | None = None, timeout: float = 30.0, max_retries: int = 5,
                 backoff_base: float = 0.5, check_scopes: bool = True) -> None:
        self.transport = Transport(base_url, api_key, timeout=timeout, max_retries=max_retries,
                                   backoff_base=backoff_base)
        self.state = StateFile(state_path or default_state_path(api_key))
        self._ops = Operations(self.state, check_scopes=check_scopes)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    # Driving the shared operations with blocking I/O -------------------------------------------

    def _send(self, call: operations.Call | operations.PutFile) -> Any:
        if isinstance(call, operations.PutFile):
            return self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        return self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                      idempotency_key=call.idempotency_key).json()

    def _run(self, op: operations.FileOp[T]) -> T:
        step = operations.advance(op, None)
        while not isinstance(step, operations.Done):
            step = operations.advance(op, self._outcome(step))
        return step.value

    def _outcome(self, call: operations.Call | operations.PutFile) -> Any:
        try:
            return self._send(call)
        except Exception as error:  # handed to the operation, which may record it and re-raise
            return error

    def _stream(self, stream: operations.Stream[T]) -> Iterator[T]:
        reply: Any = None
        while (step := operations.step_of(stream, reply)) is not None:
            reply = None
            if isinstance(step, operations.Call):
                reply = self._send(step)
            elif isinstance(step, operations.Sleep):
                time.sleep(step.seconds)
            else:
                yield step.value

    # Identity ------------------------------------------------------------------------------------

    def me(self) -> t.ActorContext:
        """The actor context of the key (``GET /v1/agent/me``); refreshes the known scopes."""
        return self._run(self._ops.me())

    def whoami(self) -> dict[str, Any]:
        return self._run(self._ops.whoami())

    def require_scopes(self, scopes: Iterable[str | Scope], action: str = "this work") -> t.ActorContext:
        """Start-up check: fail closed unless the key carries every scope in ``scopes``."""
        return self._run(self._ops.require_scopes(scopes, action))

    # Tasks and claims ----------------------------------------------------------------------------

    def list_tasks(self, *, module: str | None = None, status: str | None = None, page: int | None = None,
                   page_size: int | None = None, after: str | None = None) -> t.TaskPage:
        return self._run(self._ops.list_tasks(module, status, page, page_size, after))

    def iter_tasks(self, *, module: str | None = None, status: str | None = None) -> Iterator[t.Task]:
        return self._stream(self._ops.iter_tasks(module, status))

    def get_task(self, task_id: str) -> t.Task:
        return self._run(self._ops.get_task(task_id))

    def claim(self, task_id: str) -> t.ClaimCreated:
        """Claim a task. The claim id is persisted; after a crash, calling again replays the claim."""
        return self._run(self._ops.claim(task_id))

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return dict(self.state.get("claims", {}))

    def forget_claim(self, claim_id: str) -> None:
        self._ops.forget_claim(claim_id)

    def list_claims(self, *, status: str | None = None, page: int | None = None,
                    after: str | None = None) -> t.ClaimPage:
        return self._run(self._ops.list_claims(status, page, after))

    def claim_status(self, claim_id: str) -> t.ClaimStatus:
        return self._run(self._ops.claim_status(claim_id))

    def heartbeat(self, claim_id: str) -> t.ClaimStatus:
        return self._run(self._ops.heartbeat(claim_id))

    def release(self, claim_id: str) -> t.ClaimStatus:
        return self._run(self._ops.release(claim_id))

    def submit(self, claim_id: str, result_type: str, content: str | None = None,
               attachments: list[t.Attachment] | None = None, *,
               idempotency_key: str | None = None) -> t.SubmissionReceipt:
        """Submit a claim's artifact exactly once (see :meth:`Operations.submit`)."""
        return self._run(self._ops.submit(claim_id, result_type, content, attachments, idempotency_key))

    def upload(self, claim_id: str, path: str | Path, *, mime_type: str | None = None, file_name: str | None = None,
               on_progress: Callable[[int], None] | None = None) -> t.Upload:
        """Upload a file for a claim (see :meth:`Operations.upload`); ``attachment_of`` turns the result into
        a submission attachment. ``on_progress`` is called with each chunk's size as it leaves."""
        return self._run(self._ops.upload(claim_id, Path(path), mime_type, file_name, on_progress))

    def appeal(self, claim_id: str, reason: str, evidence_urls: list[str] | None = None) -> dict[str, Any]:
        return self._run(self._ops.appeal(claim_id, reason, evidence_urls))

    # Publishing and review -----------------------------------------------------------------------

    def publish_task(self, module: str, title: str, description: str = "", bounty: str = "0", *,
                     fields: dict[str, Any] | None = None) -> t.Task:
        """Create and publish a task; ``fields`` adds module fields (camelCase: deliverables, repositoryUrl...)."""
        return self._run(self._ops.publish_task(module, title, description, bounty, fields))

    def review_queue(self, *, module: str | None = None, page: int | None = None) -> dict[str, Any]:
        return self._run(self._ops.review_queue(module, page))

    def review(self, claim_id: str, decision: str, comment: str = "", *, score: float | None = None,
               deliverables: list[bool] | None = None) -> dict[str, Any]:
        return self._run(self._ops.review(claim_id, decision, comment, score, deliverables))

    def balance(self) -> dict[str, Any]:
        return self._run(self._ops.balance())

    # Events --------------------------------------------------------------------------------------

    def events(self, *, after: str | None = None, types: Iterable[str] | None = None,
               limit: int | None = None) -> t.EventPage:
        return self._run(self._ops.events(after, types, limit))

    def latest_cursor(self) -> str | None:
        """The cursor after the newest visible event (to follow only what happens from now on)."""
        return self._run(self._ops.latest_cursor())

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> Iterator[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        return self._stream(self._ops.iter_events(after, types, follow, poll_interval))

    # Operator resources --------------------------------------------------------------------------

    def bots(self) -> list[t.Bot]:
        return self._run(self._ops.bots())

    def create_bot(self, name: str, description: str = "", max_active_claims: int = 1) -> t.Bot:
        return self._run(self._ops.create_bot(name, description, max_active_claims))

    def keys(self) -> list[t.ApiKey]:
        return self._run(self._ops.keys())

    def create_key(self, kind: str, scopes: list[str], *, bot_id: str | None = None, name: str = "",
                   expires_at: str | None = None) -> t.ApiKey:
        return self._run(self._ops.create_key(kind, scopes, bot_id, name, expires_at))

    def revoke_key(self, key_id: str) -> t.ApiKey:
        return self._run(self._ops.revoke_key(key_id))

    def webhooks(self) -> list[t.Webhook]:
        return self._run(self._ops.webhooks())

    def create_webhook(self, url: str, events: list[str], description: str = "") -> t.Webhook:
        return self._run(self._ops.create_webhook(url, events, description))

    def delete_webhook(self, webhook_id: str) -> t.Webhook:
        return self._run(self._ops.delete_webhook(webhook_id))

    def rotate_webhook_secret(self, webhook_id: str) -> t.Webhook:
        return self._run(self._ops.rotate_webhook_secret(webhook_id))

    def test_webhook(self, webhook_id: str) -> t.Event:
        return self._run(self._ops.test_webhook(webhook_id))

    def webhook_deliveries(self, webhook_id: str) -> list[dict[str, Any]]:
        return self._run(self._ops.webhook_deliveries(webhook_id))
