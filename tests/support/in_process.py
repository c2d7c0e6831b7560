"""The application in this test process, on a temporary SQLite file: the fast tier's server.

``InProcessServer`` stands where a ``LiveServer`` stands for the tests that need no second process
(tests/conftest.py). Its base URL is registered in ``tests.support.api.IN_PROCESS``, so the helpers'
httpx clients (``Admin``, ``Account``, ``Market``) send their requests straight to the app through
Starlette's ``TestClient``. One instance serves the whole session: the settings and the engine are
process globals.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import passwords
from bountyboard.accounts import service as accounts
from bountyboard.accounts.scopes import KeyKind
from bountyboard.app import create_app
from bountyboard.cli.ops import bootstrap_admin, run_with_session
from bountyboard.config import get_settings
from bountyboard.contract.scopes import Scope
from bountyboard.storage.engine import get_database, set_database
from bountyboard.storage.migrations import upgrade_database
from tests.support.api import IN_PROCESS, Admin
from tests.support.server import ADMIN_EMAIL, ADMIN_PASSWORD

BASE_URL = "http://testserver"
# Set by the clients themselves; the app client sets its own.
_HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding"})


class AppTransport(httpx.BaseTransport):
    """httpx requests answered by the app in this process, through Starlette's TestClient (which keeps
    one event loop for the app, and may speak another httpx than the tests' helpers)."""

    def __init__(self, app_client: TestClient) -> None:
        self.app_client = app_client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = [(name, value) for name, value in request.headers.multi_items() if name not in _HOP_HEADERS]
        answer = self.app_client.request(request.method, str(request.url), headers=headers,
                                         content=request.read(), follow_redirects=False)
        return httpx.Response(answer.status_code, headers=answer.headers.multi_items(), content=answer.content)


_network_send = httpx.HTTPTransport.handle_request


def _send(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
    """Any httpx client's request to an in-process base URL goes to the app: tests written for a live
    server (``httpx.get(server.base_url + ...)``) run unchanged. Every other URL goes to the network."""
    transport = IN_PROCESS.get(f"{request.url.scheme}://{request.url.netloc.decode()}")
    return transport.handle_request(request) if transport is not None else _network_send(self, request)


def _settings_for(data_dir: Path) -> None:
    """Cache the settings of a private instance; the environment is put back at once, so that servers
    started later in this process (the live tier) do not inherit them."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "DATA_DIR": str(data_dir), "DATABASE_URL": f"sqlite+aiosqlite:///{data_dir / 'bountyboard.db'}",
            "BASE_URL": BASE_URL, "ADMIN_EMAIL": ADMIN_EMAIL, "ADMIN_PASSWORD": ADMIN_PASSWORD,
            "SECRET_KEY": "fast-tier-secret", "RUN_DISPATCHER": "false", "ENABLE_TEST_CLOCK": "true",
            "WEBHOOK_ALLOW_PRIVATE": "true", "LOG_LEVEL": "WARNING", "PROBATION_OUTCOMES": "0",
        }.items():
            env.setenv(f"BOUNTYBOARD_{name}", value)
        env.delenv("BOUNTYBOARD_REDIS_URL", raising=False)
        get_settings.cache_clear()
        get_settings()


class InProcessServer:
    """What the tests read of a server, for the app in this process. No dispatcher, sweep or other
    background job runs here, and there is no process to restart or command line to run."""

    backend = "sqlite"

    def __init__(self, data_dir: Path, admin: Admin) -> None:
        self.data_dir = data_dir
        self.db_url = f"sqlite+aiosqlite:///{data_dir / 'bountyboard.db'}"
        self.base_url = BASE_URL
        self.admin = admin
        self.log_path = data_dir / "server.log"  # what the app logs while it serves (in_process_server)


@contextlib.contextmanager
def in_process_server(data_dir: Path) -> Iterator[InProcessServer]:
    """Migrate a fresh database, bootstrap the admin with a key of every scope, and serve the app."""
    _settings_for(data_dir)
    try:
        # Argon2 at its lowest cost: a hash is made and checked the same way, in a millisecond rather
        # than the tenths of a second (and 64 MiB) that would be most of this tier's time. The live
        # servers keep the real parameters.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
            passwords._decoy_hash.cache_clear()
            yield from _serve(data_dir)
    finally:
        passwords._decoy_hash.cache_clear()
        IN_PROCESS.pop(BASE_URL, None)
        set_database(None)
        get_settings.cache_clear()


def _serve(data_dir: Path) -> Iterator[InProcessServer]:
    """The migrated database, its admin, and the app served under BASE_URL while the caller holds it."""
    upgrade_database()
    run_with_session(bootstrap_admin)

    async def admin_key(session: AsyncSession) -> str:
        admin = await accounts.get_user_by_email(session, ADMIN_EMAIL)
        assert admin is not None
        return (await accounts.issue_key(session, admin, KeyKind.USER, list(Scope))).key

    key = run_with_session(admin_key)
    with TestClient(create_app(), base_url=BASE_URL) as app_client:
        IN_PROCESS[BASE_URL] = AppTransport(app_client)
        served = InProcessServer(data_dir, Admin(BASE_URL, key))
        log = logging.FileHandler(served.log_path)
        logging.getLogger().addHandler(log)
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(httpx.HTTPTransport, "handle_request", _send)
                yield served
        finally:
            logging.getLogger().removeHandler(log)
            log.close()


@contextlib.contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every statement the in-process app's engine sends (both its views: requests' and background jobs')."""
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    engine = get_database().engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)
