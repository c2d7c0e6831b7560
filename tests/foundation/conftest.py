"""Fixtures of the foundation tests: a quiet private server per backend (no background jobs), so
that a test can compare the whole database before and after a request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.api import Admin
from tests.support.in_process import InProcessServer
from tests.support.server import LiveServer, database_url


@pytest.fixture(scope="session")
def quiet_server(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of the same backend as ``server`` with no background job; the app in this process is
    one already (tests/conftest.py parametrizes ``server``)."""
    if isinstance(server, InProcessServer):
        yield server
        return
    data_dir = tmp_path_factory.mktemp(f"quiet-{server.backend}")
    with database_url(server.backend, data_dir) as url, \
            LiveServer(data_dir, url, env={"BOUNTYBOARD_RUN_DISPATCHER": "false"}) as live:
        yield live


@pytest.fixture(scope="session")
def quiet_admin(quiet_server: LiveServer) -> Admin:
    return quiet_server.admin if isinstance(quiet_server, InProcessServer) else Admin.of(quiet_server)
