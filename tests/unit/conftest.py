"""The fast tier: no live server. HTTP tests run the real app in this process on a temporary SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.scopes import KeyKind, Scope
from bountyboard.app import create_app
from bountyboard.cli.ops import bootstrap_admin, run_with_session
from bountyboard.config import get_settings
from bountyboard.storage.engine import set_database
from bountyboard.storage.migrations import upgrade_database
from tests.market.support import Market
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


def _settings_for(data_dir: Path) -> None:
    """Cache the settings of a private instance; the environment is put back at once, so that servers
    started later in this process (the live tier) do not inherit them."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "DATA_DIR": str(data_dir), "DATABASE_URL": f"sqlite+aiosqlite:///{data_dir / 'bountyboard.db'}",
            "BASE_URL": BASE_URL, "ADMIN_EMAIL": ADMIN_EMAIL, "ADMIN_PASSWORD": ADMIN_PASSWORD,
            "SECRET_KEY": "fast-tier-secret", "RUN_DISPATCHER": "false", "ENABLE_TEST_CLOCK": "true",
            "LOG_LEVEL": "WARNING",
        }.items():
            env.setenv(f"BOUNTYBOARD_{name}", value)
        env.delenv("BOUNTYBOARD_REDIS_URL", raising=False)
        get_settings.cache_clear()
        get_settings()


@pytest.fixture(scope="package")
def app_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Admin]:
    """The admin of the app running in this process (one database for the package's tests)."""
    _settings_for(tmp_path_factory.mktemp("in-process"))
    upgrade_database()
    run_with_session(bootstrap_admin)

    async def admin_key(session: AsyncSession) -> str:
        admin = await accounts.get_user_by_email(session, ADMIN_EMAIL)
        assert admin is not None
        return (await accounts.issue_key(session, admin, KeyKind.USER, list(Scope))).key

    key = run_with_session(admin_key)
    try:
        with TestClient(create_app(), base_url=BASE_URL) as app_client:
            IN_PROCESS[BASE_URL] = AppTransport(app_client)
            yield Admin(BASE_URL, key)
    finally:
        IN_PROCESS.pop(BASE_URL, None)
        set_database(None)
        get_settings.cache_clear()


@pytest.fixture
def market(app_admin: Admin) -> Iterator[Market]:
    """Accounts and tasks over in-process HTTP; after each test the ledger must still balance."""
    market = Market(app_admin)
    yield market
    check = market.ledger_check()
    assert check["balanced"] and check["totalCents"] == 0, check
