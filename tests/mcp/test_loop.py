"""The agent loop over MCP, with the SDK's own client, over both transports, against a live server."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from bountyboard.mcp_server.tools import TOOLS
from tests.cli.proxy import SwallowingProxy
from tests.client.loop import Marketplace
from tests.mcp.support import TRANSPORTS, answer, problem, stdio_client
from tests.support.api import Admin
from tests.support.server import LiveServer


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_mcp_client_works_the_loop_and_is_refused_without_the_scope(
        transport: str, loop_server: tuple[LiveServer, Admin], market: Marketplace) -> None:
    server, _ = loop_server
    task = market.publish("fun")
    reader = market.operator.bot(scopes=["tasks:read", "claims:read"])
    connect = TRANSPORTS[transport]

    async def work() -> None:
        async with connect(server.base_url, market.bot.key) as client:
            tools = await client.list_tools()
            assert sorted(tool.name for tool in tools.tools) == sorted(spec.name for spec in TOOLS)
            assert all(tool.output_schema for tool in tools.tools)
            listed = answer(await client.call_tool("list_tasks", {"module": "fun"}))
            assert task["id"] in [item["id"] for item in listed["data"]]
            eligible = answer(await client.call_tool("list_tasks", {"module": "fun", "eligible": True}))
            assert [(t["eligible"], t["ineligibleReason"]) for t in eligible["data"] if t["id"] == task["id"]] == [
                (True, None)]
            claimed = answer(await client.call_tool("claim_task", {"task_id": task["id"]}))
            assert claimed["taskId"] == task["id"] and claimed["nextAction"] == "submit"
            receipt = answer(await client.call_tool("submit_result", {
                "claim_id": claimed["claimId"], "result_type": "text", "content": "An old pond, a frog."}))
            assert receipt["nextAction"] == "wait_for_review"
            status = answer(await client.call_tool("get_claim_status", {"claim_id": claimed["claimId"]}))
            assert status["submissionId"] == receipt["submissionId"]
            assert status["reviewState"] == "pending"
            events = answer(await client.call_tool("list_events", {"types": ["claim.submitted"]}))
            assert claimed["claimId"] in [event["data"]["claimId"] for event in events["data"]]
        other = market.publish("fun")
        async with connect(server.base_url, reader.key) as client:
            refused = problem(await client.call_tool("claim_task", {"task_id": other["id"]}))
            assert refused["code"] == "insufficient_scope" and refused["requiredScopes"] == ["tasks:claim"]
            assert refused["status"] == 403
        assert market.claims_of(other["id"]) == []

    asyncio.run(work())


def test_a_restarted_stdio_client_gets_the_first_receipt(loop_server: tuple[LiveServer, Admin],
                                                         market: Marketplace) -> None:
    """The submit's answer is lost (the proxy swallows it), the MCP client is killed mid-call, and a new
    one repeats the call: it gets the receipt of the submission the service recorded the first time."""
    server, _ = loop_server
    task = market.publish("fun")
    arguments = {"result_type": "text", "content": "Autumn moonlight."}

    async def work() -> None:
        async with stdio_client(server.base_url, market.bot.key) as client:
            claim_id = answer(await client.call_tool("claim_task", {"task_id": task["id"]}))["claimId"]
        with SwallowingProxy(server.base_url, r"/submit$") as proxy:
            async with stdio_client(proxy.url, market.bot.key) as client:
                with anyio.CancelScope() as scope:
                    async def kill_when_recorded() -> None:
                        await anyio.to_thread.run_sync(proxy.held.wait, 60)
                        scope.cancel()

                    async with anyio.create_task_group() as group:
                        group.start_soon(kill_when_recorded)
                        await client.call_tool("submit_result", {"claim_id": claim_id, **arguments})
                        raise AssertionError("the answer was not swallowed")
            assert proxy.held_status == 200
        async with stdio_client(server.base_url, market.bot.key) as client:
            receipt = answer(await client.call_tool("submit_result", {"claim_id": claim_id, **arguments}))
        [claim] = market.claims_of(task["id"])
        assert claim["submission"]["id"] == receipt["submissionId"]
        submitted = [e for e in market.bot_events("claim.submitted") if e["data"]["claimId"] == claim_id]
        assert len(submitted) == 1

    asyncio.run(work())


def test_the_endpoint_refuses_a_request_without_a_valid_key(loop_server: tuple[LiveServer, Admin]) -> None:
    import httpx

    server, _ = loop_server
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer svc-not-a-key"}):
        refused = httpx.post(f"{server.base_url}/mcp", json=body, headers=headers, timeout=30)
        assert refused.status_code == 401
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["code"] in {"unauthenticated", "invalid_token"}
