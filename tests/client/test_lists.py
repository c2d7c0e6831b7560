"""Bots and webhooks answer the list envelope; the SDK reads every page of them."""

from __future__ import annotations

from pathlib import Path

from bountyboard.client import Client
from tests.support.api import Admin
from tests.support.server import LiveServer


def test_bots_and_webhooks_are_paged_in_the_list_envelope(server: LiveServer, admin: Admin, tmp_path: Path) -> None:
    operator = admin.account("operator")
    bots = [operator.bot().id for _ in range(3)]
    for number in range(3):
        created = operator.http.post("/v1/agent/webhooks", json={"url": f"https://example.com/hook/{number}",
                                                                 "events": ["claim.reviewed"]})
        assert created.status_code == 201, created.text
    for path in ("/v1/agent/bots", "/v1/agent/webhooks"):
        first = operator.http.get(path, params={"pageSize": 2}).json()
        assert (first["page"], first["pageSize"], first["total"], first["hasMore"]) == (1, 2, 3, True)
        second = operator.http.get(path, params={"pageSize": 2, "page": 2}).json()
        assert (second["page"], second["total"], second["hasMore"], len(second["data"])) == (2, 3, False, 1)
        ids = {item["id"] for item in first["data"] + second["data"]}
        assert len(ids) == 3
        refused = operator.http.get(path, params={"pageSize": 0})
        assert refused.status_code == 422 and refused.headers["content-type"].startswith("application/problem+json")
    with Client(server.base_url, operator.key, state_path=tmp_path / "state.json") as client:
        assert sorted(bot["id"] for bot in client.bots()) == sorted(bots)
        assert len(client.webhooks()) == 3
