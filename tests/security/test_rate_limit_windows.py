"""Limits count over sliding windows, in memory and in Redis alike, and every API key has its own.

"30 uploads per 24 hours" must hold around midnight: with a fixed day window 60 uploads fit in the
two minutes around 00:00. The server's test clock is moved to just before midnight for that. The
window is limits' sliding window counter: the previous day's count, weighted by how much of it the
last 24 hours still cover, plus today's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest
import redis

from tests.benchhub.helpers import payload
from tests.security.conftest import private_server
from tests.support.api import Admin, expect_problem
from tests.support.server import LiveServer, backends

REDIS_URL = "redis://127.0.0.1:6379/0"
DAY = 86400
KEY_LIMIT = 5


@pytest.fixture(scope="module", ids="-".join,
                params=[(backend, storage) for backend in backends() for storage in ("memory", "redis")])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    backend, storage = request.param
    prefix = f"bb-test-{uuid.uuid4().hex}"
    env = {"BOUNTYBOARD_RUN_DISPATCHER": "false", "BOUNTYBOARD_KEY_RATE_LIMIT": str(KEY_LIMIT),
           "BOUNTYBOARD_REDIS_URL": REDIS_URL if storage == "redis" else None,
           "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": prefix}
    with private_server(backend, tmp_path_factory.mktemp(f"windows-{backend}-{storage}"), env) as server:
        yield server
    counters = redis.Redis.from_url(REDIS_URL)
    for key in counters.scan_iter(f"{prefix}*"):
        counters.delete(key)


def server_now(admin: Admin) -> float:
    answer = admin.http.post("/v1/admin/clock", json={"seconds": 0.001})
    assert answer.status_code == 200, answer.text
    return datetime.fromisoformat(answer.json()["now"].replace("Z", "+00:00")).timestamp()


def upload(live: LiveServer) -> httpx.Response:
    return httpx.post(live.base_url + "/v1/runs", json=payload(rewards=[1.0]), timeout=60)


def test_sixty_uploads_do_not_fit_around_midnight(live: LiveServer) -> None:
    admin = Admin.of(live)
    admin.advance_clock(DAY - server_now(admin) % DAY - 60)  # one minute before 00:00 UTC
    accepted = sum(upload(live).status_code == 200 for _ in range(30))
    assert accepted == 30
    assert upload(live).status_code == 429

    admin.advance_clock(120)  # one minute after 00:00 UTC: a new day, but not 24 hours later
    answers = [upload(live) for _ in range(30)]
    assert [answer.status_code for answer in answers] == [429] * 30, "uploads fitted in after midnight"
    # The last day's uploads fade out over the next 24 hours: room for one more comes after about a
    # thirtieth of a day, not at midnight.
    wait = int(answers[-1].headers["retry-after"])
    assert DAY / 30 - 180 < wait <= DAY / 30, wait
    admin.advance_clock(wait)
    assert upload(live).status_code == 200
    assert upload(live).status_code == 429


def test_every_key_has_a_general_limit_on_agent_and_publisher_routes(live: LiveServer) -> None:
    admin = Admin.of(live)
    operator = admin.account("publisher")
    other_key = httpx.Client(base_url=live.base_url, timeout=60,
                             headers={"Authorization": f"Bearer {operator.new_key(['tasks:read'])}"})
    for number in range(1, KEY_LIMIT + 1):
        answer = operator.http.get("/v1/agent/tasks")
        assert answer.status_code == 200, answer.text
        assert answer.headers["ratelimit-policy"] == f'"key";q={KEY_LIMIT};w=60'
        assert answer.headers["ratelimit"].startswith(f'"key";r={KEY_LIMIT - number};t=')
    refused = operator.http.get("/v1/tasks")  # publisher routes count on the same key
    problem = expect_problem(refused, 429, "rate_limited")
    assert problem["limit"] == KEY_LIMIT and problem["windowSeconds"] == 60
    wait = int(refused.headers["retry-after"])
    assert 0 < wait <= 120 and problem["retryAfter"] == wait
    assert refused.headers["ratelimit"] == f'"key";r=0;t={wait}'

    assert other_key.get("/v1/agent/tasks").status_code == 200, "another key has its own counter"
    assert operator.http.get("/v1/profile").status_code == 200, "only agent and publisher routes count"
    admin.advance_clock(wait)
    assert operator.http.get("/v1/agent/tasks").status_code == 200
