"""Failed log-ins slow down the address that makes them, for that account only.

Refusals are 429 with Retry-After, the waits grow as failures pile up, the right password from
another address goes through meanwhile, and the first address gets in again once it has waited.
The server's test clock stands in for the waiting. The second address is 127.0.0.2: Linux routes the
whole 127/8 to loopback, so the server sees a different peer.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.security.conftest import PASSWORD, log_in, new_user, private_server, site_client
from tests.support.api import Admin
from tests.support.server import LiveServer, backends


@pytest.fixture(scope="module", params=backends())
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with private_server(request.param, tmp_path_factory.mktemp(f"login-{request.param}"),
                        {"BOUNTYBOARD_RUN_DISPATCHER": "false"}) as server:
        yield server


def from_address(live: LiveServer, address: str) -> httpx.Client:
    http = site_client(live.base_url)
    http._transport = httpx.HTTPTransport(local_address=address)
    return http


def retry_after(response: httpx.Response) -> int:
    assert response.status_code == 429, response.text[:300]
    return int(response.headers["retry-after"])


def test_failures_slow_one_address_with_growing_waits_and_never_lock_the_owner_out(live: LiveServer) -> None:
    admin = Admin.of(live)
    email = new_user(admin)
    attacker = from_address(live, "127.0.0.1")
    owner = from_address(live, "127.0.0.2")

    for _ in range(5):
        assert log_in(attacker, email, "wrong password!").status_code == 401
    first_wait = retry_after(log_in(attacker, email, PASSWORD))  # even the right password waits
    assert 0 < first_wait <= 180
    assert log_in(owner, email, PASSWORD).status_code == 303, "the owner was locked out from elsewhere"

    # Keep guessing, waiting out each refusal: a wait of minutes comes before 20 failures.
    admin.advance_clock(first_wait)
    failures, waits = 5, [first_wait]
    while waits[-1] < 5 * 60:
        response = log_in(attacker, email, "wrong password!")
        if response.status_code == 429:
            waits.append(retry_after(response))
            if waits[-1] < 5 * 60:
                admin.advance_clock(waits[-1])
        else:
            assert response.status_code == 401, response.text[:300]
            failures += 1
            assert failures <= 20, f"{failures} failures and still short waits: {waits}"
    long_wait = retry_after(log_in(attacker, email, PASSWORD))
    assert long_wait >= 5 * 60, (waits, long_wait)
    assert log_in(from_address(live, "127.0.0.2"), email, PASSWORD).status_code == 303

    # Another account is not slowed for that address, and the wait, once over, lets the right password in.
    assert log_in(from_address(live, "127.0.0.1"), new_user(admin), PASSWORD).status_code == 303
    admin.advance_clock(long_wait)
    assert log_in(from_address(live, "127.0.0.1"), email, PASSWORD).status_code == 303
