"""Which webhook destinations are refused, at creation and after DNS resolution (no server needed)."""

from __future__ import annotations

import socket

import pytest

from bountyboard.events.destinations import DestinationRefused, PrivateDestination, check_new_destination, vet

pytestmark = pytest.mark.in_process

PRIVATE = [
    "http://127.0.0.1/hook", "http://localhost:8080/hook", "http://api.localhost/", "http://10.1.2.3/",
    "http://192.168.0.10/", "http://172.16.5.4/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/",
    "http://[fe80::1]/", "http://0.0.0.0/", "http://100.64.0.1/", "http://224.0.0.1/", "http://[ff02::1]/",
    # Other spellings of loopback and private IPv4 addresses the resolver accepts.
    "http://0x7f000001/", "http://2130706433/", "http://127.1/", "http://0/", "http://0x7f.1/", "http://012.1/",
    # IPv6 forms that reach an IPv4 address: mapped, compatible, 6to4, NAT64; and Teredo, site-local.
    "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::7f00:1]/", "http://[2002:7f00:1::1]/",
    "http://[2002:a00:1::]/", "http://[64:ff9b::10.0.0.1]/", "http://[64:ff9b:1::8.8.8.8]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[fec0::1]/", "http://[fc00::1]/",
]


@pytest.mark.parametrize("url", PRIVATE)
async def test_private_loopback_and_link_local_addresses_are_refused(url: str) -> None:
    with pytest.raises(PrivateDestination):
        await check_new_destination(url, allow_private=False)
    await check_new_destination(url, allow_private=True)


@pytest.mark.parametrize("url", ["https://93.184.216.34/hook", "http://[2606:4700::1]/", "http://[2002:5db8:d822::1]/",
                                 "http://[64:ff9b::93.184.216.34]/", "http://1572395042/"])
async def test_public_addresses_pass(url: str) -> None:
    await check_new_destination(url, allow_private=False)


@pytest.mark.parametrize("url", ["ftp://example.com/", "/hook", "https://", "mailto:a@example.com",
                                 "http://0177.0.0.1/", "http://user:pw@example.com/", "http://a b/"])
async def test_only_absolute_http_urls(url: str) -> None:
    with pytest.raises(DestinationRefused):
        await check_new_destination(url, allow_private=True)


async def test_names_are_resolved_and_every_address_checked() -> None:
    # This machine's own name resolves to a loopback or private address.
    url = f"http://{socket.gethostname()}:9/hook"
    with pytest.raises(PrivateDestination, match="resolves to"):
        await check_new_destination(url, allow_private=False)
    destination = await vet(url, allow_private=True)
    assert destination.addresses and destination.port == 9
    with pytest.raises(DestinationRefused, match="could not be resolved"):
        await check_new_destination("https://no-such-host.invalid/hook", allow_private=False)
