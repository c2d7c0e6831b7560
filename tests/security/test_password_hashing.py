"""Argon2 runs beside the event loop: a burst of log-ins all succeed while the service keeps answering.

How much the burst slows other requests is a timing, measured by ``perf/login_burst.py`` (the
median /healthz probe under a quarter of one log-in); here the functional part: sixteen log-ins at
once each succeed, and /healthz answers throughout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.security.conftest import log_in, new_user, private_server, site_client
from tests.support.api import Admin
from tests.support.server import LiveServer, backends

CONCURRENT = 16


@pytest.fixture(scope="module", params=backends())
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with private_server(request.param, tmp_path_factory.mktemp(f"hashing-{request.param}"),
                        {"BOUNTYBOARD_RUN_DISPATCHER": "false"}) as server:
        yield server


def test_concurrent_log_ins_all_succeed_while_the_service_answers(live: LiveServer) -> None:
    admin = Admin.of(live)
    emails = [new_user(admin) for _ in range(CONCURRENT)]
    probe = httpx.Client(base_url=live.base_url, timeout=60)
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda email=email: statuses.append(
        log_in(site_client(live.base_url), email).status_code)) for email in emails]
    for thread in threads:
        thread.start()
    probed = []
    while any(thread.is_alive() for thread in threads):
        probed.append(probe.get("/healthz").status_code)
        time.sleep(0.02)
    for thread in threads:
        thread.join()
    assert statuses == [303] * CONCURRENT, statuses
    assert probed and set(probed) == {200}, probed

