"""The webhook HTTP client: it connects only to addresses the destination check vetted.

httpx would resolve the URL's host again when it connects, and a name re-pointed since the check
(DNS rebinding) would take the attempt to an address nobody checked. Here the network layer never
resolves: an attempt runs inside :func:`pinned`, and a new connection goes to that destination's
vetted addresses, or nowhere. The URL keeps its host name, so the ``Host`` header, TLS SNI and the
certificate check all use the name as usual. Redirects are not followed and proxies from the
environment are not used (a proxy would resolve the name itself).
"""

from __future__ import annotations

import contextlib
import ssl
import typing
from collections.abc import Iterator
from contextvars import ContextVar

import httpcore
import httpx

from bountyboard.events.destinations import Destination

_pinned: ContextVar[Destination | None] = ContextVar("webhook_destination", default=None)


@contextlib.contextmanager
def pinned(destination: Destination) -> Iterator[None]:
    """Connections opened in this block for the destination's host go to its vetted addresses."""
    token = _pinned.set(destination)
    try:
        yield
    finally:
        _pinned.reset(token)


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self) -> None:
        self._network = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109 - httpcore's API
                          local_address: str | None = None,
                          socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        destination = _pinned.get()
        if destination is None or (destination.host, destination.port) != (host, port):
            raise httpcore.ConnectError(f"{host}:{port} was not vetted for this attempt; not connecting.")
        failure: Exception | None = None
        for address in destination.addresses:  # in the resolver's order, like a plain connect
            try:
                return await self._network.connect_tcp(str(address), port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = type(exc)(f"{address} port {port}: {exc}")
        assert failure is not None  # a destination has at least one address
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,  # noqa: ASYNC109 - httpcore's API
                                  socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("Webhooks are sent over TCP only.")

    async def sleep(self, seconds: float) -> None:
        await self._network.sleep(seconds)


def webhook_client(tls: ssl.SSLContext, timeout: float, max_connections: int,
                   headers: dict[str, str]) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=max_connections)
    transport = httpx.AsyncHTTPTransport(verify=tls, limits=limits, trust_env=False)
    # httpx has no public way to choose the network layer; its pool does (httpcore's own argument).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=tls, max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_PinnedBackend(),
    )
    return httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=timeout, headers=headers,
                             trust_env=False)
