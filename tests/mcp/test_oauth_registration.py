"""Client registration is open to anybody, so it is capped per client address (on a server of its own: the cap is
lowered there, and the tests of the package keep registering on theirs)."""

from __future__ import annotations

import httpx

from tests.client.loop import loop_server_fixture
from tests.mcp.oauth import REDIRECT_URI
from tests.support.api import Admin, expect_problem
from tests.support.db import table_rows
from tests.support.server import LiveServer

REGISTRATIONS = 3
loop_server = loop_server_fixture({"BOUNTYBOARD_OAUTH_REGISTRATIONS_PER_HOUR": str(REGISTRATIONS)})


def test_registrations_past_the_hourly_cap_are_refused_and_store_nothing(
        loop_server: tuple[LiveServer, Admin]) -> None:
    server, _ = loop_server
    for number in range(REGISTRATIONS):
        registered = httpx.post(f"{server.base_url}/register", timeout=30,
                                json={"client_name": f"client {number}", "redirect_uris": [REDIRECT_URI]})
        assert registered.status_code == 201, registered.text
    refused = httpx.post(f"{server.base_url}/register", timeout=30,
                         json={"client_name": "one too many", "redirect_uris": [REDIRECT_URI]})
    expect_problem(refused, 429, "rate_limited")
    assert int(refused.headers["retry-after"]) > 0
    assert len(table_rows(server)["oauth_clients"]) == REGISTRATIONS
