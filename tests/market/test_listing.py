"""The lists agents poll: cursors that do not shift under inserts, ETags and 304, reads that never wait
for a writer."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from bountyboard import clock
from bountyboard.market.listing import TaskQuery
from bountyboard.market.models import TaskStatus
from bountyboard.pagination import PageParams
from tests.market.support import Market, claim, expect_problem, ok
from tests.support.api import Account, Bot
from tests.support.server import LiveServer, psycopg_dsn

pytestmark = pytest.mark.in_process


def _walk(holder: Bot | Account, path: str, params: dict[str, Any], between: Any = None) -> list[str]:
    """Every id of a list, page by page along nextCursor; ``between`` runs after the first page."""
    ids: list[str] = []
    page = ok(holder.http.get(path, params=params))
    while True:
        ids += [item["id"] for item in page["data"]]
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            return ids
        if between is not None:
            between()
            between = None
        page = ok(holder.http.get(path, params={**params, "after": page["nextCursor"]}))


def test_task_cursor_pages_do_not_shift_when_tasks_are_published(market: Market) -> None:
    publisher = market.publisher(funds=100)
    bot = market.operator().bot()
    for _ in range(5):
        market.task(publisher, "show", bounty=0)
    params = {"module": "show", "pageSize": 2}
    before = [task["id"] for task in ok(bot.http.get("/v1/agent/tasks", params={**params, "pageSize": 100}))["data"]]
    added: list[str] = []

    walked = _walk(bot, "/v1/agent/tasks", params,
                   between=lambda: added.extend(market.task(publisher, "show", bounty=0)["id"] for _ in range(3)))

    assert walked == before  # each task once, in order; the newer ones are before the cursor
    assert not set(added) & set(walked)
    assert ok(bot.http.get("/v1/agent/tasks", params=params))["data"][0]["id"] == added[-1]


def test_claim_cursor_pages_do_not_shift_when_claims_are_made(market: Market) -> None:
    publisher = market.publisher(funds=100)
    bot = market.operator().bot()
    tasks = [market.task(publisher, "fun", bounty=1)["id"] for _ in range(4)]
    claimed = []
    for task_id in tasks[:3]:  # a bot holds one active claim at a time: each is given back
        claimed.append(claim(bot, task_id))
        ok(bot.http.post(f"/v1/agent/claims/{claimed[-1]}/release"))

    walked = _walk(bot, "/v1/agent/claims", {"pageSize": 1}, between=lambda: claim(bot, tasks[3]))

    assert walked == list(reversed(claimed))


def test_bad_cursors_are_refused(market: Market) -> None:
    bot = market.operator().bot()
    for path in ("/v1/agent/tasks", "/v1/agent/claims"):
        expect_problem(bot.http.get(path, params={"after": "not-a-cursor"}), 422, "invalid_cursor")
    first = ok(bot.http.get("/v1/agent/tasks", params={"pageSize": 1}))
    if first["nextCursor"]:
        expect_problem(bot.http.get("/v1/agent/tasks", params={"after": first["nextCursor"], "page": 2}),
                       422, "invalid_cursor")


def test_bad_list_parameters_are_refused_by_name(market: Market) -> None:
    """The polled lists read their query in one step (``querystrings.QueryModel``): each bad parameter is
    named in a 422 ``validation_failed``, unknown ones are ignored and a repeated one counts its last value."""
    bot = market.operator().bot()
    for path, params, field in [
        ("/v1/agent/tasks", {"pageSize": 0}, "pageSize"), ("/v1/agent/tasks", {"page": "two"}, "page"),
        ("/v1/agent/tasks", {"module": "nope"}, "module"), ("/v1/agent/tasks", {"status": "draftish"}, "status"),
        ("/v1/agent/tasks", {"after": "x" * 201}, "after"), ("/v1/agent/claims", {"pageSize": 101}, "pageSize"),
        ("/v1/agent/claims", {"status": "published"}, "status"),
    ]:
        problem = expect_problem(bot.http.get(path, params=params), 422, "validation_failed")
        assert [error["field"] for error in problem["errors"]] == [field], problem
    expect_problem(bot.http.get("/v1/agent/tasks", params={"status": "draft"}), 422)  # drafts are never listed
    asked = ok(bot.http.get("/v1/agent/tasks?pageSize=1&pageSize=3&colour=blue"))
    assert asked["pageSize"] == 3


def _conditional(bot: Bot, params: dict[str, Any], etag: str) -> httpx.Response:
    return bot.http.get("/v1/agent/tasks", params=params, headers={"If-None-Match": etag})


def test_task_list_etag_holds_until_something_listed_changes(market: Market) -> None:
    publisher = market.publisher(funds=100)
    reader, claimer = market.operator().bot(), market.operator().bot()
    arena = market.task(publisher, "arena", bounty=5, maxClaims=3)
    params = {"module": "arena", "pageSize": 100}
    first = ok(reader.http.get("/v1/agent/tasks", params=params))
    etag = reader.http.get("/v1/agent/tasks", params=params).headers["etag"]

    unchanged = _conditional(reader, params, etag)
    assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged.headers["etag"] == etag
    assert _conditional(reader, {**params, "pageSize": 99}, etag).status_code == 200  # another query

    claim(claimer, arena["id"])  # currentClaims of a listed task moves
    changed = _conditional(reader, params, etag)
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    listed = {task["id"]: task for task in changed.json()["data"]}
    assert listed[arena["id"]]["currentClaims"] == 1
    assert changed.json() != first

    etag = changed.headers["etag"]
    assert _conditional(reader, params, etag).status_code == 304
    market.task(publisher, "arena", bounty=5, maxClaims=3)  # a new task: the list's total and rows move
    assert _conditional(reader, params, etag).status_code == 200


def test_task_list_etag_moves_when_a_deadline_passes() -> None:
    """nextAction turns from claim to none at the deadline, with no write: the ETag follows the clock."""
    row = SimpleNamespace(id="task_1", version=1, status=TaskStatus.PUBLISHED.value, module="fun",
                          deadline=clock.now() + timedelta(hours=1))
    query = TaskQuery.of(None, None, PageParams(page=1, pageSize=20), None)
    before = query.etag(1, [row])
    assert query.etag(1, [row]) == before
    clock.advance(7200)
    try:
        assert query.etag(1, [row]) != before
    finally:
        clock.advance(-7200)


def test_single_task_and_claim_reads_answer_304_when_unchanged(market: Market) -> None:
    publisher = market.publisher(funds=100)
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=1)
    path = f"/v1/agent/tasks/{task['id']}"
    etag = ok_etag(bot.http.get(path))
    assert bot.http.get(path, headers={"If-None-Match": etag}).status_code == 304
    claim_id = claim(bot, task["id"])
    assert bot.http.get(path, headers={"If-None-Match": etag}).status_code == 200  # in progress now
    status_path = f"/v1/agent/claims/{claim_id}/status"
    etag = ok_etag(bot.http.get(status_path))
    assert bot.http.get(status_path, headers={"If-None-Match": etag}).status_code == 304


def ok_etag(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.headers["etag"]


@contextlib.contextmanager
def _writer_holding_the_lock(server: LiveServer) -> Iterator[None]:
    """Another connection in a write transaction on the tables a list request touches."""
    if server.backend == "sqlite":
        connection = sqlite3.connect(server.db_url.split("///", 1)[1], isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
    else:
        import psycopg2

        connection = psycopg2.connect(psycopg_dsn(server.db_url))
        # EXCLUSIVE lets plain reads through and stops every write to these tables.
        connection.cursor().execute("LOCK TABLE api_keys, tasks, claims IN EXCLUSIVE MODE")
    try:
        yield
    finally:
        connection.rollback()
        connection.close()


def test_reads_do_not_wait_for_a_writer(server: LiveServer, market: Market) -> None:
    """A GET, authentication included (a key's first use), takes no write lock: with a writer holding the
    database (SQLite) or the tables (PostgreSQL), it still answers at once."""
    publisher = market.publisher(funds=10)
    task = market.task(publisher, "fun", bounty=1)
    fresh_key = market.bot_keys(1)[0]  # never used: its use is recorded, but not by the request
    with _writer_holding_the_lock(server), \
            httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {fresh_key}"},
                         timeout=5) as http:
        assert http.get("/v1/agent/tasks").status_code == 200
        assert http.get(f"/v1/agent/tasks/{task['id']}").status_code == 200
        assert http.get("/v1/agent/claims").status_code == 200
