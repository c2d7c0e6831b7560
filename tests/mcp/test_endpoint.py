"""The streamable-HTTP endpoint itself: only POST is served (a GET holds no stream), and browser pages of
other origins are refused."""

from __future__ import annotations

import asyncio
import os
import time

import httpx
import pytest

from tests.client.loop import Marketplace
from tests.mcp.conftest import ALLOWED_ORIGINS
from tests.mcp.support import http_client
from tests.support.api import Admin, expect_problem
from tests.support.server import LiveServer

STREAMS = 200


def _descriptors(server: LiveServer) -> int:
    assert server.process is not None
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def test_get_and_delete_are_answered_405_at_once_and_hold_no_stream(loop_server: tuple[LiveServer, Admin],
                                                                    market: Marketplace) -> None:
    server, _ = loop_server
    headers = {"Authorization": f"Bearer {market.bot.key}", "Accept": "text/event-stream"}
    before = _descriptors(server)

    async def open_streams() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=STREAMS + 1, max_keepalive_connections=STREAMS + 1)
        async with httpx.AsyncClient(headers=headers, timeout=30, limits=limits) as http:
            return await asyncio.gather(*(http.get(f"{server.base_url}/mcp") for _ in range(STREAMS)),
                                        http.delete(f"{server.base_url}/mcp"))

    answers = asyncio.run(open_streams())
    for answered in answers:
        expect_problem(answered, 405, "method_not_allowed")
        assert answered.headers["allow"] == "POST"
    # The client has closed its connections: the server keeps none of them open.
    deadline = time.monotonic() + 15
    while _descriptors(server) > before + 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _descriptors(server) <= before + 10


def test_a_page_of_another_origin_is_refused_and_changes_nothing(loop_server: tuple[LiveServer, Admin],
                                                                 market: Marketplace) -> None:
    server, _ = loop_server
    task = market.publish("fun")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "claim_task", "arguments": {"task_id": task["id"]}}}
    headers = {"Authorization": f"Bearer {market.bot.key}", "Accept": "application/json, text/event-stream"}
    port = server.base_url.rsplit(":", 1)[1]
    for origin in ("https://evil.example", "null", f"http://127.0.0.1:{int(port) + 1}", f"https://127.0.0.1:{port}",
                   f"http://localhost:{port}", "https://agents.example.evil.example"):
        refused = httpx.post(f"{server.base_url}/mcp", json=call, headers={**headers, "Origin": origin}, timeout=30)
        body = expect_problem(refused, 403, "origin_not_allowed")
        assert origin in body["detail"]
    assert market.claims_of(task["id"]) == []


@pytest.mark.parametrize("origin", [None, "service", "service in capitals", *ALLOWED_ORIGINS,
                                    "https://agents.example:443"])
def test_the_services_own_origin_an_allowed_one_and_none_work(origin: str | None, loop_server: tuple[LiveServer, Admin],
                                                              market: Marketplace) -> None:
    server, _ = loop_server
    sent = {"service": server.base_url, "service in capitals": server.base_url.upper()}.get(str(origin), origin)

    async def listed() -> list[str]:
        headers = {"Origin": sent} if sent else {}
        async with http_client(server.base_url, market.bot.key, headers) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "claim_task" in asyncio.run(listed())
