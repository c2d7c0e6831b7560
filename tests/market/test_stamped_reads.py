"""Answers reused while the database is unchanged (``bountyboard.statecache``) are exact: a commit by another
process (a replica, a worker, the CLI), here a plain database connection beside the server, shows on the
very next request; so does a deadline passing with no write at all."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.market.support import Market, ok, private_market
from tests.support.server import LiveServer, backends, psycopg_dsn


@pytest.fixture(scope="module", params=backends())
def private(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Market]]:
    """A private server whose sweep never runs during a test: nothing but the test writes."""
    env: dict[str, str | None] = {"BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "86400", "BOUNTYBOARD_RUN_DISPATCHER": "false"}
    with private_market(request.param, tmp_path_factory.mktemp(f"still-{request.param}"), env) as private:
        yield private


@pytest.fixture
def still(private: tuple[LiveServer, Market]) -> LiveServer:
    return private[0]


@pytest.fixture
def market(private: tuple[LiveServer, Market]) -> Market:
    return private[1]


@pytest.fixture(autouse=True)
def ledger_balanced(market: Market) -> Iterator[None]:
    """This module's ledger is the private server's (replaces the shared server's check)."""
    yield
    assert market.ledger_check()["balanced"]


def _commit_elsewhere(server: LiveServer, statement: str, *values: Any) -> None:
    """One committed write on a connection of its own (``?`` placeholders on both databases)."""
    if server.backend == "sqlite":
        with contextlib.closing(sqlite3.connect(server.db_url.split("///", 1)[1])) as connection:
            assert connection.execute(statement, values).rowcount == 1
            connection.commit()
        return
    import psycopg2

    with contextlib.closing(psycopg2.connect(psycopg_dsn(server.db_url))) as connection:
        cursor = connection.cursor()
        cursor.execute(statement.replace("?", "%s"), values)
        assert cursor.rowcount == 1
        connection.commit()


def _bot_key(market: Market) -> tuple[str, str]:
    operator = market.operator()
    bot = operator.http.post("/v1/agent/bots", json={"name": "poller"})
    assert bot.status_code == 201, bot.text
    created = ok(operator.http.post("/v1/profile/api-keys", json={
        "kind": "bot", "botId": bot.json()["id"], "scopes": ["tasks:read"]}))
    return created["id"], created["key"]


def _poller(server: LiveServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=10)


def test_a_key_revoked_elsewhere_is_refused_on_the_next_request(still: LiveServer, market: Market) -> None:
    key_id, key = _bot_key(market)
    with _poller(still, key) as http:
        for _ in range(3):  # resolved once, then reused
            assert http.get("/v1/agent/tasks").status_code == 200
        revoked_at = "2001-01-01 00:00:00" if still.backend == "sqlite" else datetime(2001, 1, 1, tzinfo=UTC)
        _commit_elsewhere(still, "UPDATE api_keys SET revoked_at = ? WHERE id = ?", revoked_at, key_id)
        refused = http.get("/v1/agent/tasks")
    assert refused.status_code == 401, refused.text
    assert "revoked" in refused.json()["detail"]


def test_a_listed_task_changed_elsewhere_shows_on_the_next_request(still: LiveServer, market: Market) -> None:
    task = market.task(market.publisher(funds=1), "fun", bounty=1)
    _, key = _bot_key(market)
    params = {"module": "fun", "pageSize": 100}
    with _poller(still, key) as http:
        for _ in range(3):
            listed = {item["id"]: item for item in ok(http.get("/v1/agent/tasks", params=params))["data"]}
            assert listed[task["id"]]["title"] == task["title"]
        _commit_elsewhere(still, "UPDATE tasks SET title = ? WHERE id = ?", "retitled", task["id"])
        listed = {item["id"]: item for item in ok(http.get("/v1/agent/tasks", params=params))["data"]}
    assert listed[task["id"]]["title"] == "retitled"


def test_a_listed_deadline_passing_shows_on_the_next_request(market: Market) -> None:
    moved = ok(market.admin.http.post("/v1/admin/clock", json={"seconds": 0.001}))
    deadline = datetime.fromisoformat(moved["now"].replace("Z", "+00:00")) + timedelta(hours=1)
    task = market.task(market.publisher(funds=1), "fun", bounty=1, deadline=deadline.isoformat())
    bot = market.operator().bot(scopes=["tasks:read"])
    params = {"module": "fun", "pageSize": 100}

    def next_action() -> str:
        listed = {item["id"]: item for item in ok(bot.http.get("/v1/agent/tasks", params=params))["data"]}
        return str(listed[task["id"]]["nextAction"])

    assert [next_action() for _ in range(3)] == ["claim"] * 3
    market.admin.advance_clock(2 * 3600)  # no sweep runs here: the database does not change
    assert next_action() == "none"


def test_a_pollers_etag_holds_until_a_listed_task_changes_elsewhere(still: LiveServer, market: Market) -> None:
    publisher = market.publisher(funds=1)
    task = market.task(publisher, "fun", bounty=1)
    draft = market.draft(publisher)  # drafts are never listed
    _, key = _bot_key(market)
    params = {"module": "fun", "pageSize": 100}
    with _poller(still, key) as http:
        etag = http.get("/v1/agent/tasks", params=params).headers["etag"]
        # A commit that moves the stamp but no listed task: answered 304 from the narrow query, then
        # from the ETag kept for this stamp.
        _commit_elsewhere(still, "UPDATE tasks SET title = ? WHERE id = ?", "retitled", draft["id"])
        for _ in range(2):
            polled = http.get("/v1/agent/tasks", params=params, headers={"If-None-Match": etag})
            assert polled.status_code == 304, polled.text
        # A caller without the ETag gets the page read now, not a kept ETag without a body.
        fresh = http.get("/v1/agent/tasks", params=params)
        assert ok(fresh)["total"] >= 1 and fresh.headers["etag"] == etag
        # Any change to a listed task moves its version (migration 0016), a title changed by hand too.
        _commit_elsewhere(still, "UPDATE tasks SET title = ? WHERE id = ?", "retitled", task["id"])
        retitled = http.get("/v1/agent/tasks", params=params, headers={"If-None-Match": etag})
        assert {item["id"]: item for item in ok(retitled)["data"]}[task["id"]]["title"] == "retitled"
        assert retitled.headers["etag"] != etag
        etag = retitled.headers["etag"]
        past = "2001-01-01 00:00:00" if still.backend == "sqlite" else datetime(2001, 1, 1, tzinfo=UTC)
        _commit_elsewhere(still, "UPDATE tasks SET deadline = ? WHERE id = ?", past, task["id"])
        changed = http.get("/v1/agent/tasks", params=params, headers={"If-None-Match": etag})
    assert changed.status_code == 200, changed.text
    assert changed.headers["etag"] != etag
    assert {item["id"]: item for item in changed.json()["data"]}[task["id"]]["nextAction"] == "none"


def test_a_writing_request_refuses_a_key_whose_user_was_disabled_elsewhere(still: LiveServer, market: Market) -> None:
    """Keys are kept across writes of tasks and claims (only a change to users, bots or keys moves the
    accounts version), and a writing request checks them as a reading one does."""
    task = market.task(market.publisher(funds=10), "arena", bounty=1, maxClaims=10)
    operator = market.operator()
    bot = operator.bot(scopes=["tasks:read", "tasks:claim"])
    assert bot.http.get("/v1/agent/tasks").status_code == 200
    claimed = bot.http.post(f"/v1/agent/tasks/{task['id']}/claim")
    assert claimed.status_code == 200, claimed.text
    _commit_elsewhere(still, "UPDATE users SET disabled = ? WHERE id = ?", True, operator.id)
    refused = bot.http.post(f"/v1/agent/tasks/{task['id']}/claim")
    assert refused.status_code == 401, refused.text
    assert "disabled" in refused.json()["detail"]
