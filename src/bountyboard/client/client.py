"""The synchronous SDK: one method per operation of the agent interface, following the caller rules.

- Scopes fail closed: before its first call that needs a scope, the client reads ``/v1/agent/me``
  once; a method whose scope the key lacks raises :class:`MissingScopeError` without calling the
  service. :meth:`Client.require_scopes` checks a whole set at start-up.
- Every POST carries an ``Idempotency-Key`` and is retried with backoff (see :mod:`.transport`).
- Claims and submissions are crash-safe: the idempotency key of a claim or submission is written
  to the state file before the request leaves, and the claim id as soon as it arrives. Calling
  :meth:`Client.claim` or :meth:`Client.submit` again after a crash, with the same arguments,
  replays the first attempt instead of claiming or submitting twice.

The operations themselves live in :mod:`.operations` and the methods that run them in
:mod:`.surface`, shared with :class:`~bountyboard.client.AsyncClient`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from bountyboard.client import operations
from bountyboard.client.operations import DEFAULT_BASE_URL, Operations
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.surface import Surface
from bountyboard.client.transport import Transport

T = TypeVar("T")


class Client(Surface):
    """A synchronous client of one service for one API key (its methods: :class:`.surface.Surface`)."""

    awaited: ClassVar[bool] = False

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
