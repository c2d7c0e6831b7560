"""Upload limits over HTTP on private deployments whose clocks the tests move.

The real defaults (30 uploads per address, 200 per user, per sliding 24-hour window) are reached
exactly at their number and end when the refusal's Retry-After has passed. On SQLite the deployment
is one process counting in memory; on PostgreSQL it is two server processes on one database sharing
their counters in Redis, and the uploads alternate between them.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import httpx
import pytest
import redis

from tests.benchhub.helpers import admin_of, payload
from tests.support.api import Account, Admin, Bot
from tests.support.server import LiveServer, backends, database_url

REDIS_URL = "redis://127.0.0.1:6379/0"
DAY = 86400


@dataclass
class Deployment:
    servers: list[LiveServer]
    admins: list[Admin]

    @property
    def admin(self) -> Admin:
        return self.admins[0]

    def advance(self, seconds: float) -> None:
        """Move every process's clock by the same amount (they start at the same offset)."""
        for admin in self.admins:
            admin.advance_clock(seconds)

    def fresh_window(self) -> None:
        """Go to just after the start of the next window, so no count straddles a boundary."""
        probe = self.admin.http.post("/v1/admin/clock", json={"seconds": 0.001})
        assert probe.status_code == 200, probe.text
        for admin in self.admins[1:]:
            admin.advance_clock(0.001)
        current = datetime.fromisoformat(probe.json()["now"].replace("Z", "+00:00")).timestamp()
        self.advance(DAY - current % DAY + 5)

    def clients(self, holder: Account | Bot | None = None) -> list[httpx.Client]:
        """One client per process, anonymous or with the holder's key."""
        headers = holder.http.headers if holder else {}
        return [httpx.Client(base_url=live.base_url, headers=headers, timeout=30) for live in self.servers]


@pytest.fixture(scope="module", params=backends())
def deployment(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    data_dir = tmp_path_factory.mktemp(f"limits-{request.param}")
    prefix = f"bb-test-{uuid.uuid4().hex}"
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(database_url(request.param, data_dir))
        if request.param == "sqlite":
            servers = [stack.enter_context(LiveServer(data_dir, url))]
        else:
            shared = {"BOUNTYBOARD_REDIS_URL": REDIS_URL, "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": prefix,
                      "BOUNTYBOARD_SECRET_KEY": "shared-secret-" + uuid.uuid4().hex}
            servers = [stack.enter_context(LiveServer(data_dir / name, url, env=shared)) for name in ("a", "b")]
        admin = admin_of(servers[0])
        yield Deployment(servers, [Admin(live.base_url, admin.key) for live in servers])
    counters = redis.Redis.from_url(REDIS_URL)
    for key in counters.scan_iter(f"{prefix}*"):
        counters.delete(key)


def upload(http: httpx.Client) -> httpx.Response:
    return http.post("/v1/runs", json=payload(rewards=[1.0]))


def assert_rate_limited(response: httpx.Response, policy: str, limit: int) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "rate_limited" and problem["status"] == 429
    assert problem["limit"] == limit and problem["windowSeconds"] == DAY
    retry_after = int(response.headers["retry-after"])
    # A sliding window: the hits fade out over the next window, so the wait may pass one window.
    assert 0 < retry_after <= 2 * DAY and problem["retryAfter"] == retry_after
    assert response.headers["ratelimit-policy"] == f'"{policy}";q={limit};w={DAY}'
    assert response.headers["ratelimit"] == f'"{policy}";r=0;t={retry_after}'


def test_anonymous_uploads_stop_at_30_per_address_until_the_window_ends(deployment: Deployment) -> None:
    deployment.fresh_window()
    clients = deployment.clients()
    for number in range(1, 31):
        response = upload(clients[number % len(clients)])
        assert response.status_code == 200, f"upload {number}: {response.text}"
        assert response.headers["ratelimit"].startswith(f'"runs-ip";r={30 - number};t=')
    refused = [upload(client) for client in clients]
    for response in refused:
        assert_rate_limited(response, "runs-ip", 30)
    anonymous_runs = [run for run in clients[0].get("/v1/bench/runs", params={"pageSize": 100}).json()["data"]
                      if run["submitter"]["kind"] == "anonymous"]
    assert len(anonymous_runs) == 30, "a refused upload was stored"

    # A key counts against its user, not against the address.
    assert upload(deployment.admin.account().http).status_code == 200

    deployment.advance(int(refused[0].headers["retry-after"]))
    assert upload(clients[-1]).status_code == 200


def test_keyed_uploads_stop_at_200_per_user_across_keys_until_the_window_ends(deployment: Deployment) -> None:
    deployment.fresh_window()
    operator = deployment.admin.account()
    bot = operator.bot()
    # Across the operator's own key and its bot's key (a bot uploads for its operator), and across processes.
    clients = deployment.clients(operator) + deployment.clients(bot)
    for number in range(1, 201):
        response = upload(clients[number % len(clients)])
        assert response.status_code == 200, f"upload {number}: {response.text}"
        assert response.headers["ratelimit"].startswith(f'"runs-user";r={200 - number};t=')
    refused = [upload(client) for client in clients]
    for response in refused:
        assert_rate_limited(response, "runs-user", 200)
    assert operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()["total"] == 200

    assert upload(deployment.admin.account().http).status_code == 200, "another user has its own counter"
    deployment.advance(int(refused[-1].headers["retry-after"]))
    assert upload(clients[-1]).status_code == 200
