"""Failed log-ins slow down the address that makes them, for that account only.

Refusals are 429 with Retry-After, the waits grow as failures pile up, the right password from
another address goes through meanwhile, and the first address gets in again once it has waited.
The server's test clock stands in for the waiting. The second address is 127.0.0.2: Linux routes the
whole 127/8 to loopback, so the server sees a different peer. A failure is counted before the password
is checked, so wrong passwords sent all at once are refused past the threshold like ones sent in turn.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.security.conftest import PASSWORD, log_in, new_user, private_server, site_client
from tests.support.api import Admin
from tests.support.server import LiveServer, backends

REDIS_URL = "redis://127.0.0.1:6379/0"
FAILURES_PER_MINUTE = 5  # the first of the throttle's thresholds (site/pages/account.py, docs/security.md)


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


@pytest.fixture(scope="module", ids="-".join,
                params=[(backend, counters) for backend in backends() for counters in ("memory", "redis")])
def live_with_counters(request: pytest.FixtureRequest,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    backend, counters = request.param
    env: dict[str, str | None] = {"BOUNTYBOARD_RUN_DISPATCHER": "false"}
    if counters == "redis":
        env |= {"BOUNTYBOARD_REDIS_URL": REDIS_URL, "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": f"bb-test-{uuid.uuid4().hex}"}
    with private_server(backend, tmp_path_factory.mktemp(f"login-{backend}-{counters}"), env) as server:
        yield server


def test_wrong_passwords_sent_at_once_are_verified_at_most_up_to_the_threshold(live_with_counters: LiveServer) -> None:
    live = live_with_counters
    email = new_user(Admin.of(live))
    guesses = 60
    attackers = [from_address(live, "127.0.0.3") for _ in range(guesses)]
    for attacker in attackers:  # connections opened beforehand: the guesses only wait for the barrier
        attacker.get("/login")
    start = threading.Barrier(guesses)

    def guess(attacker: httpx.Client) -> httpx.Response:
        start.wait()
        return log_in(attacker, email, "wrong password!")

    with ThreadPoolExecutor(guesses) as pool:
        answers = list(pool.map(guess, attackers))
    statuses = [answer.status_code for answer in answers]
    assert set(statuses) <= {401, 429}, [answer.text[:300] for answer in answers if answer.status_code >= 500]
    verified, refused = statuses.count(401), [answer for answer in answers if answer.status_code == 429]
    assert verified <= FAILURES_PER_MINUTE, f"{verified} wrong passwords verified, {len(refused)} refused"
    assert len(refused) >= guesses - FAILURES_PER_MINUTE
    assert all(int(answer.headers["retry-after"]) > 0 for answer in refused)

    assert log_in(from_address(live, "127.0.0.4"), email, PASSWORD).status_code == 303, "the owner was locked out"
    retry_after(log_in(from_address(live, "127.0.0.3"), email, PASSWORD))  # that address still waits
