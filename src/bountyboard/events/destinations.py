"""Where webhooks may go: absolute http(s) URLs whose every address is public.

The one check of destinations. At creation the host is resolved and every address it names must be
public; before every attempt it is resolved again and checked, and the attempt then connects to
those vetted addresses only (see ``transport``), so a name re-pointed between the check and the
connection (DNS rebinding) reaches nothing it was not checked for.

An address is judged by what it reaches: an IPv4 host in any spelling the resolver accepts
(``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``, ``0``) is read as that address, and an
IPv6 address that embeds an IPv4 one (IPv4-mapped, IPv4-compatible, 6to4, NAT64) by the embedded
address. Development and tests lift the restriction with ``BOUNTYBOARD_WEBHOOK_ALLOW_PRIVATE=true``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

MAX_URL_LENGTH = 2048

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 ranges whose last 32 bits are the IPv4 address actually reached.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class DestinationRefused(ValueError):
    """The URL is malformed, its host cannot be resolved, or it reaches a non-public address."""


class PrivateDestination(DestinationRefused):
    """The host is or resolves to an address webhooks may not reach: no attempt will ever be made."""


@dataclass(frozen=True)
class Destination:
    """A URL's host as the HTTP client connects to it, and the addresses that passed the check."""

    host: str
    port: int
    addresses: tuple[Address, ...]


def parse_url(url: str) -> httpx.URL:
    """An absolute http(s) URL without credentials, or :class:`DestinationRefused`."""
    if len(url) > MAX_URL_LENGTH:
        raise DestinationRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise DestinationRefused("The URL must not contain whitespace or control characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port out of range
        parsed = httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        raise DestinationRefused(f"The URL is not valid: {exc}.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or not parsed.host:
        raise DestinationRefused("The URL must be absolute and start with http:// or https://.")
    if parts.username or parts.password:
        raise DestinationRefused("The URL must not carry credentials; authenticate receipts with the signature.")
    return parsed


def _target(url: str) -> tuple[str, int]:
    """The host (IDNA-encoded, as the HTTP client sends it) and port a URL connects to."""
    parsed = parse_url(url)
    return parsed.raw_host.decode("ascii"), parsed.port or (443 if parsed.scheme == "https" else 80)


def ip_literal(host: str) -> Address | None:
    """The address a numeric host means to the resolver, in any spelling it accepts; None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))  # hex, octal, decimal and short forms
    except OSError:
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: Address) -> bool:
    """Whether webhooks may reach the address: globally routable, unicast, not reserved."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public(embedded)
        if address.is_site_local:
            return False
    # Teredo (2001::/32), NAT64 local use and the other special ranges are not global.
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_private
                                      or address.is_loopback or address.is_link_local or address.is_unspecified)


def _refuse_private(host: str, addresses: tuple[Address, ...]) -> None:
    for address in addresses:
        if not is_public(address):
            named = "is" if ip_literal(host) is not None else f"resolves to {address},"
            raise PrivateDestination(f"Webhooks cannot be sent to {host}: it {named} a non-public address "
                                     "(private, loopback, link-local, reserved or multicast).")


async def resolve(host: str, port: int) -> tuple[Address, ...]:
    """Every address the host names, in the resolver's order."""
    literal = ip_literal(host)
    if literal is not None:
        return (literal,)
    try:
        # socket.getaddrinfo in a thread, as asyncio's own loop does, whatever loop runs (uvloop has its own).
        infos = await asyncio.to_thread(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise DestinationRefused(f"The host {host} could not be resolved: {exc}.") from exc
    # Scope ids (fe80::1%eth0) are dropped: such addresses are refused whatever their zone.
    addresses = dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos)
    if not addresses:
        raise DestinationRefused(f"The host {host} could not be resolved: no address.")
    return tuple(addresses)


async def vet(url: str, *, allow_private: bool) -> Destination:
    """The destination of an attempt: the URL's host resolved now, every address checked."""
    host, port = _target(url)
    lowered = host.lower().rstrip(".")
    if not allow_private and (lowered == "localhost" or lowered.endswith(".localhost")):
        raise PrivateDestination(f"Webhooks cannot be sent to {host}: it is a loopback name.")
    addresses = await resolve(host, port)
    if not allow_private:
        _refuse_private(host, addresses)
    return Destination(host, port, addresses)


async def check_new_destination(url: str, *, allow_private: bool) -> None:
    """The check when a subscription is created or its URL changed (names are resolved now too)."""
    if allow_private:
        parse_url(url)
        return
    await vet(url, allow_private=False)
