"""A live server per backend with a fast retry schedule, shared by the webhook tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.api import ALL_SCOPES, Admin
from tests.support.in_process import InProcessServer
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

# Retries after 5 ms, 0.3 s, 1.8 s, ... instead of 5 s, 5 min, 30 min.
FAST = {"BOUNTYBOARD_WEBHOOK_TIME_SCALE": "0.001", "BOUNTYBOARD_WEBHOOK_POLL_INTERVAL_SECONDS": "0.05"}


@dataclass
class Hooks:
    server: LiveServer
    admin: Admin


def admin_of(server: LiveServer) -> Admin:
    key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
    return Admin(server.base_url, key)


@pytest.fixture(scope="session")
def hooks(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    """A live server of ``server``'s backend with the fast schedule; in the fast tier (tests/conftest.py)
    the app in this process, which delivers nothing (no dispatcher runs there)."""
    if isinstance(server, InProcessServer):
        yield Hooks(server, server.admin)
        return
    data_dir = tmp_path_factory.mktemp(f"hooks-{server.backend}")
    with database_url(server.backend, data_dir) as url, LiveServer(data_dir, url, env=FAST) as live:
        yield Hooks(live, admin_of(live))
