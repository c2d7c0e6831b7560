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
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bountyboard.client import calls
from bountyboard.client.base import BaseClient
from bountyboard.client.calls import DEFAULT_BASE_URL
from bountyboard.client.methods import Awaiting
from bountyboard.client.state import StateFile, default_state_path
from bountyboard.client.transport import AsyncTransport

T = TypeVar("T")


class AsyncClient(BaseClient, Awaiting):
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
