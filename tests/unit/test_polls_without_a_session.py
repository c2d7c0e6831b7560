"""A poll of the task list answered from what the process keeps (``statecache``, under the request's stamps)
makes no database session and sends no statement; once anything is committed, the next poll reads again.
The stamps live in the request's scope (``storage.session``), so the key check and the list
ask for a session only when what they keep does not answer."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bountyboard.storage.engine import get_database
from tests.market.support import Market
from tests.support.in_process import recorded_statements


def _sessions_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the request sessionmakers called from here on, in order."""
    database, made = get_database(), []
    for name in ("snapshot_sessionmaker", "request_sessionmaker"):
        def counting(maker: Callable[[], object] = getattr(database, name), name: str = name) -> object:
            made.append(name)
            return maker()

        monkeypatch.setattr(database, name, counting)
    return made


def test_a_repeated_poll_makes_no_session_until_something_is_committed(
        market: Market, monkeypatch: pytest.MonkeyPatch) -> None:
    publisher = market.publisher(funds=10)
    market.task(publisher, "fun", bounty=2)
    bot = market.operator().bot()
    first = bot.http.get("/v1/agent/tasks")
    assert first.status_code == 200, first.text

    made = _sessions_made(monkeypatch)
    with recorded_statements() as statements:
        again = bot.http.get("/v1/agent/tasks")
    assert again.status_code == 200 and again.content == first.content
    assert made == [] and statements == []

    market.task(publisher, "fun", bounty=2)  # a commit: the database's state stamp moves
    made.clear()
    with recorded_statements() as statements:
        after = bot.http.get("/v1/agent/tasks")
    assert after.status_code == 200 and after.json()["total"] == first.json()["total"] + 1
    assert made == ["snapshot_sessionmaker"] and statements
