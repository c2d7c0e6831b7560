"""GET /v1/agent/events: visibility per caller, cursor pages, type filters."""

from __future__ import annotations

import httpx
import pytest

from tests.events.conftest import Hooks
from tests.events.helpers import account, emit, feed

pytestmark = pytest.mark.in_process


def test_each_caller_sees_only_its_events(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    publisher = account(hooks.admin, "publisher")
    bot = operator.bot()
    other_bot = operator.bot()
    stranger = account(hooks.admin, "operator")
    claimed = emit(hooks.admin, "task.claimed", botId=bot.id, operatorId=operator.id, publisherId=publisher.id)
    other = emit(hooks.admin, "task.claimed", botId=other_bot.id, operatorId=operator.id, publisherId=publisher.id)
    direct = emit(hooks.admin, "claim.reviewed", operatorId=operator.id, publisherId=publisher.id)

    ids = lambda events: [e["id"] for e in events]  # noqa: E731
    assert ids(feed(bot)) == ids(claimed)
    assert ids(feed(other_bot)) == ids(other)
    assert ids(feed(operator)) == ids(claimed + other + direct)
    assert ids(feed(publisher)) == ids(claimed + other + direct)
    assert feed(stranger) == []
    event = feed(bot)[0]
    assert set(event) == {"id", "type", "timestamp", "sequence", "data"}
    assert event["id"].startswith("evt_") and event["timestamp"].endswith("Z")


def test_cursor_pages_follow_the_global_sequence(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    emitted = emit(hooks.admin, "claim.reviewed", 12, operatorId=operator.id)
    emit(hooks.admin, "appeal.resolved", 3, operatorId=operator.id)
    first = operator.http.get("/v1/agent/events", params={"limit": 5}).json()
    assert set(first) == {"data", "nextCursor", "hasMore"}
    assert first["hasMore"] is True and len(first["data"]) == 5
    everything = feed(operator, limit=5)
    sequences = [e["sequence"] for e in everything]
    assert sequences == sorted(sequences) and len(set(sequences)) == 15
    assert [e["id"] for e in everything[:12]] == [e["id"] for e in emitted]
    only = feed(operator, types="appeal.resolved")
    assert [e["type"] for e in only] == ["appeal.resolved"] * 3

    # At the end the cursor stays put, and new events show up after it.
    last = operator.http.get("/v1/agent/events", params={"after": first["nextCursor"], "limit": 100}).json()
    assert last["hasMore"] is False and last["nextCursor"] == str(sequences[-1])
    idle = operator.http.get("/v1/agent/events", params={"after": last["nextCursor"]}).json()
    assert idle == {"data": [], "nextCursor": last["nextCursor"], "hasMore": False}
    newer = emit(hooks.admin, "claim.reviewed", operatorId=operator.id)
    after = operator.http.get("/v1/agent/events", params={"after": last["nextCursor"]}).json()
    assert [e["id"] for e in after["data"]] == [newer[0]["id"]]


def test_bad_parameters_and_missing_scope_are_refused(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    for params in ({"after": "abc"}, {"after": "-1"}, {"after": "9" * 19}, {"types": "claim.reviewed,nope"},
                   {"limit": 0}, {"limit": 101}):
        response = operator.http.get("/v1/agent/events", params=params)
        assert response.status_code == 422, params
        assert response.headers["content-type"] == "application/problem+json"
    key = operator.new_key(["webhooks:manage"])
    response = httpx.get(hooks.server.base_url + "/v1/agent/events", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 403 and response.json()["requiredScopes"] == ["claims:read"]
