"""Shared fixtures: a live server per database backend, and its admin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.api import Admin
from tests.support.server import LiveServer, backends, database_url

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session", params=backends())
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server per backend for the whole session; tests isolate themselves with fresh accounts."""
    data_dir = tmp_path_factory.mktemp(f"server-{request.param}")
    with database_url(request.param, data_dir) as url, LiveServer(data_dir, url) as live:
        yield live


@pytest.fixture(scope="session")
def admin(server: LiveServer) -> Admin:
    return Admin.of(server)
