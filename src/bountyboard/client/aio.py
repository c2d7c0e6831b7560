"""The asynchronous SDK: :class:`AsyncClient`, the surface of :class:`~bountyboard.client.Client`, awaited.

    from bountyboard.client import AsyncClient

    async with AsyncClient("https://bountyboard.example", "svc-...") as client:
        task = await anext(client.iter_tasks(status="published"))
        claim = await client.claim(task["id"])
        await client.submit(claim["claimId"], "text", "the result")

Each method is an operation of :mod:`.operations` run with awaited I/O (:func:`awaited` makes one from the
other), so scopes, bodies, idempotency keys and crash-safe state are those of the synchronous client; the
retry rules are those of :mod:`.transport`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from bountyboard.client import calls
from bountyboard.client import types as t
from bountyboard.client.base import BaseClient, presented_as
from bountyboard.client.calls import DEFAULT_BASE_URL
from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import AsyncTransport

P = ParamSpec("P")
T = TypeVar("T")


def awaited(operation: Callable[Concatenate[Operations, P], calls.FileOp[T]]
            ) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    """``operation`` as a coroutine method of :class:`AsyncClient`, with its parameters, that runs it with
    awaited I/O and returns its result."""
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(operation(self._ops, *args, **kwargs))
    return presented_as(method, "AsyncClient", operation)


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

    me = awaited(Operations.me)
    whoami = awaited(Operations.whoami)
    reputation = awaited(Operations.reputation)
    publisher_decisions = awaited(Operations.publisher_decisions)
    require_scopes = awaited(Operations.require_scopes)

    # Tasks and claims -----------------------------------------------------------------------------

    list_tasks = awaited(Operations.list_tasks)

    def iter_tasks(self, *, module: str | None = None, status: str | None = None,
                   eligible: bool = False) -> AsyncIterator[t.Task]:
        """Every task, following ``nextCursor`` (stable while tasks arrive) or, without one, page numbers."""
        return self._stream(self._ops.iter_tasks(module=module, status=status, eligible=eligible))

    get_task = awaited(Operations.get_task)
    claim = awaited(Operations.claim)
    list_claims = awaited(Operations.list_claims)
    claim_status = awaited(Operations.claim_status)
    heartbeat = awaited(Operations.heartbeat)
    release = awaited(Operations.release)
    submit = awaited(Operations.submit)
    upload = awaited(Operations.upload)
    file_link = awaited(Operations.file_link)
    appeal = awaited(Operations.appeal)

    # Publishing and review ------------------------------------------------------------------------

    publish_task = awaited(Operations.publish_task)
    review_queue = awaited(Operations.review_queue)
    review = awaited(Operations.review)
    balance = awaited(Operations.balance)

    # Events ---------------------------------------------------------------------------------------

    events = awaited(Operations.events)
    latest_cursor = awaited(Operations.latest_cursor)

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> AsyncIterator[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        return self._stream(self._ops.iter_events(after=after, types=types, follow=follow, poll_interval=poll_interval))

    # Operator resources ---------------------------------------------------------------------------

    bots = awaited(Operations.bots)
    create_bot = awaited(Operations.create_bot)
    keys = awaited(Operations.keys)
    create_key = awaited(Operations.create_key)
    revoke_key = awaited(Operations.revoke_key)
    webhooks = awaited(Operations.webhooks)
    create_webhook = awaited(Operations.create_webhook)
    delete_webhook = awaited(Operations.delete_webhook)
    rotate_webhook_secret = awaited(Operations.rotate_webhook_secret)
    test_webhook = awaited(Operations.test_webhook)
    webhook_deliveries = awaited(Operations.webhook_deliveries)

    # Driving the shared operations with awaited I/O --------------------------------------------

    async def _send(self, call: calls.Call | calls.PutFile) -> Any:
        if isinstance(call, calls.PutFile):
            return await self.transport.put_file(call.url, call.headers, call.chunks(), call.size)
        response = await self.transport.request(call.method, call.path, json=call.body, params=call.params,
                                                idempotency_key=call.idempotency_key)
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
