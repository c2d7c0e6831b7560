"""One private live server per backend for the MCP tests (they discover tasks, so nobody else publishes there)."""

from __future__ import annotations

import pytest

from tests.client.loop import Marketplace, loop_server_fixture
from tests.support.api import Admin
from tests.support.server import LiveServer

# Browser origins /mcp accepts besides the service's own (tests/mcp/test_endpoint.py).
ALLOWED_ORIGINS = ("https://agents.example", "http://localhost:5173")
loop_server = loop_server_fixture({"BOUNTYBOARD_MCP_ALLOWED_ORIGINS": ", ".join(ALLOWED_ORIGINS)}, scope="package")


@pytest.fixture()
def market(loop_server: tuple[LiveServer, Admin]) -> Marketplace:
    return Marketplace(loop_server[1])
