"""Operators see and use only their own bots and keys."""

from __future__ import annotations

import pytest

from tests.support.api import BOT_SCOPES, Admin, client
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process


def test_operator_b_cannot_see_or_use_operator_a_bots_and_keys(server: LiveServer, admin: Admin) -> None:
    a, b = admin.account("operator"), admin.account("operator")
    a_bot = a.bot(name="shared-name")
    b_bot = b.bot(name="shared-name")  # names are per operator
    a_keys = {item["id"] for item in a.http.get("/v1/profile/api-keys").json()["data"]}
    assert len(a_keys) == 2  # the user key made by the admin, and the bot key

    # Lists: each sees only its own.
    assert [bot["id"] for bot in b.http.get("/v1/agent/bots").json()["data"]] == [b_bot.id]
    assert [bot["id"] for bot in a.http.get("/v1/agent/bots").json()["data"]] == [a_bot.id]
    b_keys = {item["id"] for item in b.http.get("/v1/profile/api-keys").json()["data"]}
    assert not a_keys & b_keys

    # Revoking A's key: not found for B, and A's key keeps working.
    for key_id in a_keys:
        refused = b.http.delete(f"/v1/profile/api-keys/{key_id}")
        assert refused.status_code == 404, refused.text
        assert refused.json()["code"] == "not_found"
    assert a_bot.http.get("/v1/agent/me").status_code == 200
    assert all(item["revokedAt"] is None for item in a.http.get("/v1/profile/api-keys").json()["data"])

    # A key for A's bot: not found for B (the bot's existence is not revealed), and nothing is made.
    for_a_bot = b.http.post("/v1/profile/api-keys", json={"kind": "bot", "botId": a_bot.id, "scopes": BOT_SCOPES})
    assert for_a_bot.status_code == 404, for_a_bot.text
    nobody = "bot_01jd2k3m4n5p6q7r8s9t0v1w2x"
    unknown = b.http.post("/v1/profile/api-keys", json={"kind": "bot", "botId": nobody, "scopes": BOT_SCOPES})
    assert unknown.status_code == 404
    assert for_a_bot.json()["detail"].replace(a_bot.id, "?") == unknown.json()["detail"].replace(nobody, "?")
    assert {item["id"] for item in b.http.get("/v1/profile/api-keys").json()["data"]} == b_keys

    # Each bot acts for its own operator.
    with client(server.base_url, a_bot.key) as http:
        me = http.get("/v1/agent/me").json()
    assert me["bot"]["id"] == a_bot.id and me["operator"]["id"] == a.id
    with client(server.base_url, b_bot.key) as http:
        assert http.get("/v1/agent/me").json()["operator"]["id"] == b.id


def test_bot_names_are_unique_per_operator(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    first = operator.http.post("/v1/agent/bots", json={"name": "worker-1"})
    assert first.status_code == 201, first.text
    assert first.json()["id"].startswith("bot_") and first.json()["operatorId"] == operator.id
    again = operator.http.post("/v1/agent/bots", json={"name": "worker-1"})
    assert again.status_code == 409 and again.json()["code"] == "bot_name_taken"
    assert len(operator.http.get("/v1/agent/bots").json()["data"]) == 1
