"""X-Forwarded-For counts only from the proxies named in BOUNTYBOARD_TRUSTED_PROXIES.

By default nobody is trusted, so a forged header does not make a new address for the per-address
upload limit; with the setting naming 127.0.0.1 (a proxy on this host), the header is the client.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.benchhub.helpers import payload
from tests.security.conftest import private_server
from tests.support.api import expect_problem
from tests.support.server import LiveServer, backends

LIMIT = 3


def upload(live: LiveServer, forwarded_for: str) -> httpx.Response:
    return httpx.post(live.base_url + "/v1/runs", json=payload(rewards=[1.0]),
                      headers={"X-Forwarded-For": forwarded_for}, timeout=60)


@pytest.fixture(params=backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def limited_server(backend: str, tmp_path_factory: pytest.TempPathFactory, trusted: str | None) -> Iterator[LiveServer]:
    env = {"BOUNTYBOARD_RUNS_PER_IP_PER_DAY": str(LIMIT), "BOUNTYBOARD_RUN_DISPATCHER": "false",
           "BOUNTYBOARD_TRUSTED_PROXIES": trusted}
    with private_server(backend, tmp_path_factory.mktemp(f"proxies-{backend}"), env) as live:
        yield live


def test_a_forged_forwarded_for_does_not_make_a_new_address(backend: str,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    for live in limited_server(backend, tmp_path_factory, None):
        for number in range(LIMIT):
            assert upload(live, f"203.0.113.{number}").status_code == 200
        expect_problem(upload(live, "198.51.100.7"), 429, "rate_limited")


def test_the_header_counts_from_a_trusted_proxy(backend: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    for live in limited_server(backend, tmp_path_factory, "127.0.0.1"):
        for number in range(LIMIT + 2):
            assert upload(live, f"203.0.113.{number}").status_code == 200
        for _ in range(LIMIT - 1):
            assert upload(live, "203.0.113.0").status_code == 200
        assert upload(live, "203.0.113.0").status_code == 429
