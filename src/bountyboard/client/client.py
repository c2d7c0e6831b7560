"""The synchronous SDK: one method per operation of the agent interface, following the caller rules.

- Scopes fail closed: before its first call that needs a scope, the client reads ``/v1/agent/me``
  once; a method whose scope the key lacks raises :class:`MissingScopeError` without calling the
  service. :meth:`Client.require_scopes` checks a whole set at start-up.
- Every POST carries an ``Idempotency-Key`` and is retried with backoff (see :mod:`.transport`).
- Claims and submissions are crash-safe: the idempotency key of a claim or submission is written
  to the state file before the request leaves, and the claim id as soon as it arrives. Calling
  :meth:`Client.claim` or :meth:`Client.submit` again after a crash, with the same arguments,
  replays the first attempt instead of claiming or submitting twice.

Each method is an operation of :mod:`.operations` (shared with :class:`~bountyboard.client.AsyncClient`,
whose methods are these, awaited) run with blocking I/O: :func:`blocking` makes one from the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from bountyboard.client import calls
from bountyboard.client import types as t
from bountyboard.client.base import BaseClient, presented_as
from bountyboard.client.calls import DEFAULT_BASE_URL
from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import Transport

P = ParamSpec("P")
T = TypeVar("T")


def blocking(operation: Callable[Concatenate[Operations, P], calls.FileOp[T]]) -> Callable[Concatenate[Client, P], T]:
    """``operation`` as a method of :class:`Client`, with its parameters, that runs it with blocking I/O and
    returns its result."""
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(operation(self._ops, *args, **kwargs))
    return presented_as(method, "Client", operation)


class Client(BaseClient):
    """A synchronous client of one service for one API key."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None, *,
                 state_path: Path | None = None, timeout: float = 30.0, max_retries: int = 5,
                 backoff_base: float = 0.5, check_scopes: bool = True) -> None:
        self.transport = Transport(base_url, api_key, timeout=timeout, max_retries=max_retries,
                                   backoff_base=backoff_base)
        super().__init__(StateFile(state_path or default_state_path(api_key)), check_scopes=check_scopes)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    # Identity -------------------------------------------------------------------------------------

    me = blocking(Operations.me)
    whoami = blocking(Operations.whoami)
    reputation = blocking(Operations.reputation)
    publisher_decisions = blocking(Operations.publisher_decisions)
    require_scopes = blocking(Operations.require_scopes)

    # Tasks and claims -----------------------------------------------------------------------------

    list_tasks = blocking(Operations.list_tasks)

    def iter_tasks(self, *, module: str | None = None, status: str | None = None,
                   eligible: bool = False) -> Iterator[t.Task]:
        """Every task, following ``nextCursor`` (stable while tasks arrive) or, without one, page numbers."""
        return self._stream(self._ops.iter_tasks(module=module, status=status, eligible=eligible))

    get_task = blocking(Operations.get_task)
    claim = blocking(Operations.claim)
    list_claims = blocking(Operations.list_claims)
    claim_status = blocking(Operations.claim_status)
    heartbeat = blocking(Operations.heartbeat)
    release = blocking(Operations.release)
    submit = blocking(Operations.submit)
    upload = blocking(Operations.upload)
    file_link = blocking(Operations.file_link)
    appeal = blocking(Operations.appeal)

    # Publishing and review ------------------------------------------------------------------------

    publish_task = blocking(Operations.publish_task)
    review_queue = blocking(Operations.review_queue)
    review = blocking(Operations.review)
    balance = blocking(Operations.balance)

    # Events ---------------------------------------------------------------------------------------

    events = blocking(Operations.events)
    latest_cursor = blocking(Operations.latest_cursor)

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> Iterator[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        return self._stream(self._ops.iter_events(after=after, types=types, follow=follow, poll_interval=poll_interval))

    # Operator resources ---------------------------------------------------------------------------

    bots = blocking(Operations.bots)
    create_bot = blocking(Operations.create_bot)
    keys = blocking(Operations.keys)
    create_key = blocking(Operations.create_key)
    revoke_key = blocking(Operations.revoke_key)
    webhooks = blocking(Operations.webhooks)
    create_webhook = blocking(Operations.create_webhook)
    delete_webhook = blocking(Operations.delete_webhook)
    rotate_webhook_secret = blocking(Operations.rotate_webhook_secret)
    test_webhook = blocking(Operations.test_webhook)
    webhook_deliveries = blocking(Operations.webhook_deliveries)

    # Driving the shared operations with blocking I/O -------------------------------------------

    def _send(self, call: calls.Call | calls.PutFile) -> Any:
        if isinstance(call, calls.PutFile):
            return self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        return self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                      idempotency_key=call.idempotency_key).json()

    def _run(self, op: calls.FileOp[T]) -> T:
        step = calls.advance(op, None)
        while not isinstance(step, calls.Done):
            step = calls.advance(op, self._outcome(step))
        return step.value

    def _outcome(self, call: calls.Call | calls.PutFile) -> Any:
        try:
            return self._send(call)
        except Exception as error:  # handed to the operation, which may record it and re-raise
            return error

    def _stream(self, stream: calls.Stream[T]) -> Iterator[T]:
        reply: Any = None
        while (step := calls.step_of(stream, reply)) is not None:
            reply = None
            if isinstance(step, calls.Call):
                reply = self._send(step)
            elif isinstance(step, calls.Sleep):
                time.sleep(step.seconds)
            else:
                yield step.value
