"""Argon2 runs beside the event loop: a burst of log-ins does not stall other requests.

The reference is the time one log-in takes on its own (the cost of one Argon2 verification on this
machine, whatever its load). While 16 log-ins run at once, /healthz is probed repeatedly; with the
hashing on the event loop each probe waits behind several verifications, beside it a probe is
answered in a fraction of one.
"""

from __future__ import annotations

import statistics
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


def timed(call: object) -> float:
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - started


def test_concurrent_log_ins_leave_the_event_loop_free(live: LiveServer) -> None:
    admin = Admin.of(live)
    emails = [new_user(admin) for _ in range(CONCURRENT)]
    probe = httpx.Client(base_url=live.base_url, timeout=60)
    probe.get("/healthz")
    statuses: list[int] = []
    clients = [site_client(live.base_url) for _ in range(3 + CONCURRENT)]  # one fresh visitor per log-in

    def one_log_in(index: int, client: int) -> None:
        statuses.append(log_in(clients[client], emails[index]).status_code)

    single = statistics.median(timed(lambda i=i: one_log_in(i, CONCURRENT + i)) for i in range(3))

    # Probes start every 20 ms, each on its own, so they sample the burst evenly in time: with the
    # hashing on the event loop most of them land while it is blocked.
    threads = [threading.Thread(target=one_log_in, args=(index, index)) for index in range(CONCURRENT)]
    latencies: list[float] = []
    probes: list[threading.Thread] = []

    def probe_once() -> None:
        latencies.append(timed(lambda: probe.get("/healthz").raise_for_status()))

    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        probes.append(threading.Thread(target=probe_once))
        probes[-1].start()
        time.sleep(0.02)
    for thread in threads + probes:
        thread.join()
    assert statuses == [303] * (3 + CONCURRENT), statuses

    assert len(latencies) >= 5, "the burst ended before enough probes"
    typical = statistics.median(latencies)
    print(f"one log-in {single * 1000:.0f} ms; /healthz during {CONCURRENT} log-ins: median {typical * 1000:.0f} ms, "
          f"p90 {statistics.quantiles(latencies, n=10)[-1] * 1000:.0f} ms over {len(latencies)} probes")
    # On the event loop a probe waits behind several verifications (measured: a median of 0.35 to 0.46
    # of one log-in); beside it, only the two cores' contention with the hashing threads remains
    # (0.02 to 0.17 of one log-in, the top on an idle machine where one log-in is fastest).
    assert typical < single / 4, (single, sorted(latencies))
