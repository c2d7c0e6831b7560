"""Ids in the SDK's paths: an argument that is not an id of its kind is refused before any request, so it
cannot climb out of its path segment to another operation with the caller's key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bountyboard.client import Client, InvalidIdError
from tests.cli.proxy import SwallowingProxy
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer


@pytest.fixture()
def market(admin: Admin) -> Marketplace:
    return Marketplace(admin)


def _attempts(task_id: str, attachment: Path) -> list[tuple[str, Callable[[Client, str], Any], str]]:
    """(parameter, call, argument): each operation that puts an id in its path, given a path of another
    operation instead: cancelling the publisher's task, or reading its key list."""
    cancel = f"../../../v1/tasks/{task_id}/cancel?"
    keys = "../../../v1/profile/api-keys?"
    return [
        ("claim_id", Client.heartbeat, cancel),
        ("claim_id", Client.claim_status, keys),
        ("claim_id", Client.release, cancel),
        ("claim_id", lambda client, claim_id: client.submit(claim_id, "text", "x"), cancel),
        ("claim_id", lambda client, claim_id: client.appeal(claim_id, "wrong"), cancel),
        ("claim_id", lambda client, claim_id: client.review(claim_id, "accept"), cancel),
        ("claim_id", lambda client, claim_id: client.upload(claim_id, attachment), cancel),
        ("file_key", Client.file_link, keys),
        ("task_id", Client.get_task, "../../../v1/profile/api-keys?"),
        ("task_id", Client.claim, f"../../../v1/tasks/{task_id}/cancel?"),
        ("key_id", Client.revoke_key, "x/../../../../v1/profile/api-keys?"),
        ("webhook_id", Client.webhook_deliveries, keys),
        ("webhook_id", Client.delete_webhook, keys),
        ("bot_id", Client.reputation, keys),
        ("publisher_id", Client.publisher_decisions, keys),
        # Encoded dots, an id with a tail, an id of another kind: none is an id of the kind the path names.
        ("claim_id", Client.claim_status, "%2e%2e%2f%2e%2e%2f%2e%2e%2fv1%2fprofile%2fapi-keys%3f"),
        ("task_id", Client.get_task, f"{task_id}/../../../../v1/profile/api-keys?"),
        ("claim_id", Client.claim_status, task_id),
    ]


def test_an_argument_that_leaves_its_path_segment_is_refused_before_any_request(
        server: LiveServer, market: Marketplace, tmp_path: Path) -> None:
    task = market.publish("fun")
    attachment = tmp_path / "notes.txt"
    attachment.write_text("notes")
    state = tmp_path / "state.json"
    with SwallowingProxy(server.base_url) as proxy, \
            Client(proxy.url, market.publisher.key, state_path=state) as client:
        for parameter, call, argument in _attempts(task["id"], attachment):
            with pytest.raises(InvalidIdError) as refused:
                call(client, argument)
            assert refused.value.parameter == parameter, argument
            assert repr(argument) in str(refused.value)
        assert proxy.forwarded == []
        assert client.get_task(task["id"])["id"] == task["id"]  # the proxy forwards what is sent
        assert ("GET", f"/v1/agent/tasks/{task['id']}") in proxy.forwarded
    assert market.publisher.http.get(f"/v1/tasks/{task['id']}").json()["status"] == "published"
    assert not state.exists()  # no claim or submission was recorded as pending either
