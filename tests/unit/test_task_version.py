"""A task's version moves at every update of its row, and the task list's and a task's ETags follow it:
a slot that frees moves them, and so does a change no flow makes today (SQL by hand)."""

from __future__ import annotations

import sqlite3
from typing import Any

from bountyboard.config import get_settings
from tests.market.support import Market, claim, ok
from tests.support.api import Account, Bot


def _sql(statement: str, *parameters: Any) -> list[Any]:
    """A statement on the in-process app's SQLite file, from outside the app (as an operator's shell would)."""
    connection = sqlite3.connect(get_settings().data_dir / "bountyboard.db")
    try:
        with connection:
            return connection.execute(statement, parameters).fetchall()
    finally:
        connection.close()


def _version(task_id: str) -> int:
    return int(_sql("SELECT version FROM tasks WHERE id = ?", task_id)[0][0])


def _etags(reader: Bot | Account, task_id: str) -> tuple[str, str]:
    """The ETags of the page listing the task and of the task itself."""
    listed = reader.http.get("/v1/agent/tasks", params={"pageSize": 100})
    assert task_id in {task["id"] for task in ok(listed)["data"]}
    single = reader.http.get(f"/v1/agent/tasks/{task_id}")
    ok(single)
    return listed.headers["etag"], single.headers["etag"]


def _still_fresh(reader: Bot | Account, task_id: str, etags: tuple[str, str]) -> tuple[bool, bool]:
    listed = reader.http.get("/v1/agent/tasks", params={"pageSize": 100},
                             headers={"If-None-Match": etags[0]})
    single = reader.http.get(f"/v1/agent/tasks/{task_id}", headers={"If-None-Match": etags[1]})
    return listed.status_code == 304, single.status_code == 304


def test_a_slot_that_frees_moves_the_version_and_the_etags(market: Market) -> None:
    publisher, operator = market.publisher(funds=10), market.operator()
    task = market.task(publisher, "arena", bounty=10)  # three slots
    claim_id = claim(operator, task["id"])
    before, etags = _version(task["id"]), _etags(operator, task["id"])
    assert _still_fresh(operator, task["id"], etags) == (True, True)

    ok(operator.http.post(f"/v1/agent/claims/{claim_id}/release"))  # the slot frees; the task stays published
    assert _version(task["id"]) > before
    assert _still_fresh(operator, task["id"], etags) == (False, False)
    moved = _etags(operator, task["id"])
    assert moved[0] != etags[0] and moved[1] != etags[1]
    assert ok(operator.http.get(f"/v1/agent/tasks/{task['id']}"))["currentClaims"] == 0


def test_any_update_of_a_task_moves_its_version_and_etags_even_by_hand(market: Market) -> None:
    publisher, operator = market.publisher(funds=10), market.operator()
    task = market.task(publisher, "fun", bounty=10)
    before, etags = _version(task["id"]), _etags(operator, task["id"])

    # A published task's description is changed by no flow: a column the old hand-kept list left out.
    _sql("UPDATE tasks SET description = 'Reworded by hand.' WHERE id = ?", task["id"])
    assert _version(task["id"]) == before + 1
    assert _still_fresh(operator, task["id"], etags) == (False, False)
    assert ok(operator.http.get(f"/v1/agent/tasks/{task['id']}"))["description"] == "Reworded by hand."
    # An update that sets the version itself is taken as it is (the trigger does not move it again).
    _sql("UPDATE tasks SET version = version + 10 WHERE id = ?", task["id"])
    assert _version(task["id"]) == before + 11
