"""HTTP transport of the SDK: bearer auth, idempotent POSTs and retries with backoff.

Every caller rule that concerns the wire lives here, so nothing built on top can forget one:

- each POST carries an ``Idempotency-Key`` (a uuid4 unless the caller gives one), and the same key
  is sent on every retry of that request, so a retried submission is recorded once;
- 429, 5xx answers and connection errors are retried with exponential backoff and full jitter,
  waiting at least as long as ``Retry-After`` asks;
- an error answer becomes :class:`ApiError` carrying the problem+json body.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx

from bountyboard import __version__
from bountyboard.client.exceptions import BountyboardError

USER_AGENT = f"bountyboard-python/{__version__}"
# Retry-After is honoured, but a server cannot park a client for longer than this per attempt.
MAX_RETRY_AFTER_SECONDS = 120.0


class ApiError(BountyboardError):
    """A problem+json answer: any 4xx, or a 429/5xx still failing after the last retry."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        self.code = str(problem.get("code") or "http_error")
        self.detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
        super().__init__(f"{status} {self.code}: {self.detail}")

    @property
    def required_scopes(self) -> list[str]:
        return [str(scope) for scope in self.problem.get("requiredScopes") or []]

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {"status": response.status_code, "code": "http_error",
                    "detail": response.text[:500] or response.reason_phrase}
        return cls(response.status_code, body)


def _retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


class _RetryRules:
    """What both transports share: headers, the idempotency key of a request, and when to retry."""

    def __init__(self, base_url: str, api_key: str | None, *, max_retries: int, backoff_base: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries
        self.backoff_base = backoff_base

    def default_headers(self) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    @staticmethod
    def prepare(method: str, params: dict[str, Any] | None, idempotency_key: str | None,
                content: bytes | None) -> tuple[str, dict[str, str], dict[str, Any] | None]:
        """The method, headers and query of one request; the same key goes out on every retry of it.
        Raw ``content`` goes out as ``application/octet-stream``."""
        method = method.upper()
        headers: dict[str, str] = {} if content is None else {"Content-Type": "application/octet-stream"}
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        elif idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        query = {key: value for key, value in (params or {}).items() if value is not None}
        return method, headers, query or None

    def backoff(self, attempt: int, response: httpx.Response | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based): full jitter, floor Retry-After."""
        delay = random.uniform(0, self.backoff_base * (2 ** attempt))
        if response is not None:
            asked = _retry_after_seconds(response)
            if asked is not None:
                delay = max(delay, min(asked, MAX_RETRY_AFTER_SECONDS))
        return delay

    def retry_delay(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before retrying (``response`` None: the connection failed), or None to stop."""
        if attempt >= self.max_retries:
            return None
        if response is None:
            return self.backoff(attempt)
        # A replayed request whose first attempt is still running answers 409 in_use: wait for it.
        in_flight = response.status_code == 409 and _problem_code(response) == "idempotency_key_in_use"
        return self.backoff(attempt, response) if _retryable(response.status_code) or in_flight else None

    @staticmethod
    def outcome(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            raise ApiError.from_response(response)
        return response

    def after_attempt(self, attempt: int, reply: httpx.Response | httpx.TransportError) -> httpx.Response | float:
        """What attempt number ``attempt`` came to: the answer, or the seconds to wait before trying again.
        Raises the connection error, or :class:`ApiError` for an error answer, once retrying stops."""
        if isinstance(reply, httpx.TransportError):
            delay = self.retry_delay(attempt, None)
            if delay is None:
                raise reply
            return delay
        delay = self.retry_delay(attempt, reply)
        return self.outcome(reply) if delay is None else delay


class Transport(_RetryRules):
    """A synchronous client for one base URL and one API key."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 5, backoff_base: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(base_url, api_key, max_retries=max_retries, backoff_base=backoff_base)
        self._sleep = sleep
        self._client = httpx.Client(base_url=self.base_url, headers=self.default_headers(), timeout=timeout)

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                idempotency_key: str | None = None, content: bytes | None = None) -> httpx.Response:
        """One request with the key, retried by the rules above; ``json`` is the body, or ``content`` raw bytes."""
        method, headers, query = self.prepare(method, params, idempotency_key, content)
        attempt = 0
        while not isinstance(step := self.after_attempt(attempt, self._attempt(method, path, json, content, query,
                                                                               headers)), httpx.Response):
            self._sleep(step)
            attempt += 1
        return step

    def _attempt(self, method: str, path: str, json: Any, content: bytes | None, query: dict[str, Any] | None,
                 headers: dict[str, str]) -> httpx.Response | httpx.TransportError:
        try:
            return self._client.request(method, path, json=json, content=content, params=query, headers=headers)
        except httpx.TransportError as error:
            return error

    def put_file(self, url: str, headers: dict[str, str], chunks: Iterator[bytes], size: int) -> None:
        """PUT a file's bytes to an upload URL. Never with the API key: the URL carries its own permission,
        and it may be the object store's."""
        response = httpx.put(url, content=chunks, headers={**headers, "Content-Length": str(size)},
                             timeout=self._client.timeout)
        if response.status_code >= 400:
            raise ApiError.from_response(response)

    def close(self) -> None:
        self._client.close()


class AsyncTransport(_RetryRules):
    """The asynchronous twin of :class:`Transport`: the same rules, awaited.

    ``http_transport`` lets the caller route requests elsewhere than the network (the service's MCP
    endpoint passes the application itself); ``headers`` are added to every request.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 5, backoff_base: float = 0.5,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 http_transport: httpx.AsyncBaseTransport | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(base_url, api_key, max_retries=max_retries, backoff_base=backoff_base)
        self._sleep = sleep
        self._client = httpx.AsyncClient(base_url=self.base_url, headers={**self.default_headers(), **(headers or {})},
                                         timeout=timeout, transport=http_transport)

    async def __aenter__(self) -> AsyncTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                      idempotency_key: str | None = None, content: bytes | None = None) -> httpx.Response:
        """:meth:`Transport.request`, awaited."""
        method, headers, query = self.prepare(method, params, idempotency_key, content)
        attempt = 0
        while not isinstance(step := self.after_attempt(attempt, await self._attempt(method, path, json, content,
                                                                                     query, headers)), httpx.Response):
            await self._sleep(step)
            attempt += 1
        return step

    async def _attempt(self, method: str, path: str, json: Any, content: bytes | None, query: dict[str, Any] | None,
                       headers: dict[str, str]) -> httpx.Response | httpx.TransportError:
        try:
            return await self._client.request(method, path, json=json, content=content, params=query,
                                              headers=headers)
        except httpx.TransportError as error:
            return error

    async def put_file(self, url: str, headers: dict[str, str], chunks: Iterator[bytes], size: int) -> None:
        """:meth:`Transport.put_file`, awaited."""
        async def stream() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

        async with httpx.AsyncClient(timeout=self._client.timeout) as plain:
            response = await plain.put(url, content=stream(), headers={**headers, "Content-Length": str(size)})
        if response.status_code >= 400:
            raise ApiError.from_response(response)

    async def aclose(self) -> None:
        await self._client.aclose()


def _problem_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None
