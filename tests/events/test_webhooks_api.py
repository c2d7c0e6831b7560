"""The subscription routes: who may subscribe to what, where, and what each answer looks like."""

from __future__ import annotations

import httpx
import pytest

from tests.events.conftest import Hooks
from tests.events.helpers import account, attempts, subscribe
from tests.events.receiver import Receiver

pytestmark = pytest.mark.in_process

URL = "https://hooks.example.com/bountyboard"


def test_create_returns_the_secret_once(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    created = operator.http.post("/v1/agent/webhooks", json={"url": URL, "events": ["claim.reviewed"],
                                                             "description": "review results"})
    assert created.status_code == 201, created.text
    hook = created.json()
    assert hook["id"].startswith("whk_") and hook["secret"].startswith("whsec_")
    assert hook["url"] == URL and hook["events"] == ["claim.reviewed"] and hook["enabled"] is True
    assert hook["botId"] is None and hook["operatorId"] == operator.id
    fetched = operator.http.get(f"/v1/agent/webhooks/{hook['id']}").json()
    listed = operator.http.get("/v1/agent/webhooks").json()["data"]
    assert "secret" not in fetched and all("secret" not in item for item in listed)
    assert [item["id"] for item in listed] == [hook["id"]]


def test_operators_may_subscribe_only_to_review_outcomes(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    refused = operator.http.post("/v1/agent/webhooks", json={"url": URL, "events": ["claim.reviewed",
                                                                                    "task.claimed"]})
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["code"] == "event_not_subscribable"
    assert "claim.reviewed" in problem["detail"] and "appeal.resolved" in problem["detail"]
    assert "task.claimed" in problem["detail"]
    assert operator.http.get("/v1/agent/webhooks").json()["data"] == []

    bot = operator.bot()
    kinds = ["task.claimed", "claim.submitted", "claim.reviewed", "appeal.resolved"]
    hook = subscribe(bot, URL, kinds)
    assert hook["events"] == kinds and hook["botId"] == bot.id
    internal = bot.http.post("/v1/agent/webhooks", json={"url": URL, "events": ["webhook.test"]})
    assert internal.status_code == 422 and internal.json()["code"] == "event_not_subscribable"
    # The operator manages its bot's subscription; the bot sees only its own.
    own = subscribe(operator, URL, ["appeal.resolved"])
    assert {h["id"] for h in operator.http.get("/v1/agent/webhooks").json()["data"]} == {hook["id"], own["id"]}
    assert [h["id"] for h in bot.http.get("/v1/agent/webhooks").json()["data"]] == [hook["id"]]
    assert bot.http.get(f"/v1/agent/webhooks/{own['id']}").status_code == 404
    # A change to a user-key subscription follows the same rule.
    changed = operator.http.patch(f"/v1/agent/webhooks/{own['id']}", json={"events": ["claim.submitted"]})
    assert changed.status_code == 422 and changed.json()["code"] == "event_not_subscribable"


def test_urls_must_be_absolute_http(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    for url in ["/relative/path", "ftp://example.com/x", "example.com/hook", "https://", "http://user:pw@example.com/",
                "https://exa mple.com/"]:
        response = operator.http.post("/v1/agent/webhooks", json={"url": url, "events": ["claim.reviewed"]})
        assert response.status_code == 422, (url, response.text)
        assert response.json()["code"] == "invalid_webhook_url"
    missing = operator.http.post("/v1/agent/webhooks", json={"url": URL, "events": []})
    assert missing.status_code == 422


def test_update_and_delete(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    other = account(hooks.admin, "operator")
    hook = subscribe(operator, URL, ["claim.reviewed"])
    path = f"/v1/agent/webhooks/{hook['id']}"
    assert other.http.get(path).status_code == 404
    assert other.http.patch(path, json={"enabled": False}).status_code == 404
    assert other.http.delete(path).status_code == 404

    changed = operator.http.patch(path, json={"url": URL + "/v2", "events": ["appeal.resolved", "claim.reviewed"],
                                              "enabled": False})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["url"] == URL + "/v2" and body["events"] == ["appeal.resolved", "claim.reviewed"]
    assert body["enabled"] is False and body["disabledReason"]
    assert operator.http.patch(path, json={"bogus": 1}).status_code == 422
    assert operator.http.delete(path).status_code == 200
    assert operator.http.get(path).status_code == 404


def test_scope_webhooks_manage_is_required(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    reader = httpx.Client(base_url=hooks.server.base_url,
                          headers={"Authorization": f"Bearer {operator.new_key(['claims:read'])}"})
    response = reader.get("/v1/agent/webhooks")
    assert response.status_code == 403
    assert response.json()["requiredScopes"] == ["webhooks:manage"]
    assert reader.post("/v1/agent/webhooks", json={"url": URL, "events": ["claim.reviewed"]}).status_code == 403
    assert httpx.get(hooks.server.base_url + "/v1/agent/webhooks").status_code == 401


@pytest.mark.live  # the dispatcher delivers to a receiver over the network
def test_redeliver_sends_the_same_event_again(hooks: Hooks) -> None:
    operator = account(hooks.admin, "operator")
    with Receiver() as receiver:
        hook = subscribe(operator, receiver.url, ["claim.reviewed"])
        for _ in range(3):
            assert operator.http.post(f"/v1/agent/webhooks/{hook['id']}/test").status_code == 200
        receiver.wait_for_ids(3)
        recorded = attempts(operator, hook["id"], 3)
        # Cursor pages of attempts, newest first.
        first = operator.http.get(f"/v1/agent/webhooks/{hook['id']}/deliveries", params={"limit": 2}).json()
        assert first["hasMore"] is True and len(first["data"]) == 2
        rest = operator.http.get(f"/v1/agent/webhooks/{hook['id']}/deliveries",
                                 params={"limit": 2, "after": first["nextCursor"]}).json()
        assert rest["hasMore"] is False and rest["nextCursor"] is None
        assert [a["id"] for a in first["data"] + rest["data"]] == [a["id"] for a in reversed(recorded)]

        target = recorded[0]
        again = operator.http.post(f"/v1/agent/webhooks/{hook['id']}/deliveries/{target['id']}/redeliver")
        assert again.status_code == 200, again.text
        assert again.json()["eventId"] == target["eventId"] and again.json()["status"] == "pending"
        got = receiver.wait_until(lambda r: len(r) >= 4)
        assert got[3].id == target["eventId"]
        only = operator.http.get(f"/v1/agent/webhooks/{hook['id']}/deliveries",
                                 params={"eventId": target["eventId"]}).json()["data"]
        assert len(only) in (1, 2) and all(a["eventId"] == target["eventId"] for a in only)
        missing = operator.http.post(f"/v1/agent/webhooks/{hook['id']}/deliveries/dlv_nope/redeliver")
        assert missing.status_code == 404
