"""One private live server per backend for the MCP tests (they discover tasks, so nobody else publishes there)."""

from __future__ import annotations

import pytest

from tests.client.loop import Marketplace, loop_server_fixture
from tests.support.api import Admin
from tests.support.server import LiveServer

loop_server = loop_server_fixture(scope="package")


@pytest.fixture()
def market(loop_server: tuple[LiveServer, Admin]) -> Marketplace:
    return Marketplace(loop_server[1])
