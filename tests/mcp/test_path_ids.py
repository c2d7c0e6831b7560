"""Tool arguments that name a resource: one that is not an id of its kind is refused as a tool error, before
any request, so it cannot reach another operation with the caller's key (cancel a task, read the key list)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.cli.proxy import SwallowingProxy
from tests.client.loop import Marketplace
from tests.mcp.support import TRANSPORTS, problem
from tests.support.api import Admin
from tests.support.server import LiveServer


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_tool_argument_that_leaves_its_path_segment_is_refused_and_changes_nothing(
        transport: str, loop_server: tuple[LiveServer, Admin], market: Marketplace) -> None:
    server, _ = loop_server
    task = market.publish("fun")
    publisher = market.publisher  # a key that may cancel the task and read its own keys
    key_ids = [key["id"] for key in publisher.http.get("/v1/profile/api-keys").json()["data"]]
    cancel, keys = f"../../../v1/tasks/{task['id']}/cancel?", "../../../v1/profile/api-keys?"
    attempts = [
        ("heartbeat_claim", {"claim_id": cancel}, "claim_id"),
        ("release_claim", {"claim_id": cancel}, "claim_id"),
        ("get_claim_status", {"claim_id": keys}, "claim_id"),
        ("submit_result", {"claim_id": cancel, "result_type": "text", "content": "x"}, "claim_id"),
        ("appeal_claim", {"claim_id": cancel, "reason": "The review is wrong."}, "claim_id"),
        ("get_task", {"task_id": keys}, "task_id"),
        ("claim_task", {"task_id": cancel}, "task_id"),
    ]

    async def work(base_url: str) -> None:
        async with TRANSPORTS[transport](base_url, publisher.key) as client:
            for tool, arguments, field in attempts:
                refused = problem(await client.call_tool(tool, arguments))
                assert (refused["status"], refused["code"]) == (422, "validation_failed"), (tool, refused)
                assert refused["errors"][0]["field"] == field and "must be an id" in refused["detail"]
                assert not any(key_id in json.dumps(refused) for key_id in key_ids)

    # The stdio server calls the service through the proxy, which shows that nothing left it; the HTTP
    # endpoint calls the application in-process.
    with SwallowingProxy(server.base_url) as proxy:
        asyncio.run(work(proxy.url if transport == "stdio" else server.base_url))
    assert proxy.forwarded == []
    assert publisher.http.get(f"/v1/tasks/{task['id']}").json()["status"] == "published"
    assert market.claims_of(task["id"]) == []
