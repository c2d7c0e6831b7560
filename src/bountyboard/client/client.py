"""The synchronous SDK: one method per operation of the agent interface, following the caller rules.

- Scopes fail closed: before its first call that needs a scope, the client reads ``/v1/agent/me``
  once; a method whose scope the key lacks raises :class:`MissingScopeError` without calling the
  service. :meth:`Client.require_scopes` checks a whole set at start-up.
- Every POST carries an ``Idempotency-Key`` and is retried with backoff (see :mod:`.transport`).
- Claims and submissions are crash-safe: the idempotency key of a claim or submission is written
  to the state file before the request leaves, and the claim id as soon as it arrives. Calling
  :meth:`Client.claim` or :meth:`Client.submit` again after a crash, with the same arguments,
  replays the first attempt instead of claiming or submitting twice.

The methods are those of :class:`~.base.BaseClient`, each one operation of :mod:`.operations`, shared
with :class:`~bountyboard.client.AsyncClient`, whose methods are these, awaited; this module brings the
blocking I/O that drives them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from bountyboard.client import calls
from bountyboard.client.base import BaseClient
from bountyboard.client.calls import DEFAULT_BASE_URL
from bountyboard.client.methods import Blocking
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import Transport

T = TypeVar("T")


class Client(BaseClient, Blocking):
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

    # Driving the shared operations with blocking I/O -------------------------------------------

    def _send(self, call: calls.Call | calls.PutFile) -> Any:
        if isinstance(call, calls.PutFile):
            return self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        return self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                      idempotency_key=call.idempotency_key, content=call.content).json()

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
