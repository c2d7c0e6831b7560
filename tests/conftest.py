"""Shared fixtures: the server of a test (live per backend, or the app in this process), and its admin.

Tiers. A test is in the fast tier when it lives in tests/unit/ or its module is marked
``pytestmark = pytest.mark.in_process`` (it needs no second process: no restart, no CLI, no
dispatcher delivering, no browser). The fast tier runs such a module's tests against the app in this
process on SQLite (``server`` is then an ``InProcessServer``); the live tier runs the same tests again
against the live server on PostgreSQL, when PostgreSQL is among the backends. Every other test is in
the live tier, on every backend. ``pytest -m fast`` selects the fast tier, ``-m "not fast"`` the live one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.api import Admin
from tests.support.in_process import InProcessServer, in_process_server
from tests.support.server import LiveServer, backends, database_url

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
UNIT = REPO_ROOT / "tests" / "unit"
IN_PROCESS = "in-process"  # the `server` parameter of the fast tier
# Fixtures that are a server: a test asking for one of them is run once per value of `server`.
SERVER_FIXTURES = ("server", "quiet_server")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "in_process: this module's tests need no second process; the fast tier "
                                       "runs them in process on SQLite, the live tier on PostgreSQL")
    config.addinivalue_line("markers", "live: this test of an in_process module needs the live server (every backend)")
    config.addinivalue_line("markers", "fast: in the fast tier (set at collection; select with -m fast)")


def runs_in_process(item: pytest.Item) -> bool:
    return item.get_closest_marker("in_process") is not None and item.get_closest_marker("live") is None


def server_params(definition: pytest.Item) -> list[Any]:
    """The servers a test runs against: the app in this process (fast) and the live PostgreSQL server
    for a test marked in_process, every live backend for the others."""
    if not runs_in_process(definition):
        return backends()
    return [pytest.param(IN_PROCESS, marks=pytest.mark.fast)] + [name for name in backends() if name != "sqlite"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if any(name in metafunc.fixturenames for name in SERVER_FIXTURES):
        metafunc.parametrize("server", server_params(metafunc.definition), indirect=True, scope="session")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The rest of the fast tier: tests/unit/, and the tests of in_process modules that need no server."""
    for item in items:
        in_unit = UNIT in Path(str(item.fspath)).parents
        serverless = "server" not in getattr(item, "fixturenames", ())
        if in_unit or (serverless and runs_in_process(item)):
            item.add_marker(pytest.mark.fast)


@pytest.fixture(scope="session")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """The app in this process on a fresh SQLite file, one for the session (settings are process-wide)."""
    with in_process_server(tmp_path_factory.mktemp("in-process")) as app:
        yield app


@pytest.fixture(scope="session")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server per backend for the whole session; tests isolate themselves with fresh accounts.
    In the fast tier, the app in this process (an ``InProcessServer``, typed as a server here)."""
    if request.param == IN_PROCESS:
        yield request.getfixturevalue("in_process")
        return
    data_dir = tmp_path_factory.mktemp(f"server-{request.param}")
    with database_url(request.param, data_dir) as url, LiveServer(data_dir, url) as live:
        yield live


@pytest.fixture(scope="session")
def admin(server: LiveServer) -> Admin:
    return server.admin if isinstance(server, InProcessServer) else Admin.of(server)
