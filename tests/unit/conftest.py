"""The fast tier's own tests: HTTP tests run the real app in this process (tests/support/in_process.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.market.support import Market
from tests.support.api import Admin
from tests.support.in_process import InProcessServer


@pytest.fixture(scope="session")
def app_admin(in_process: InProcessServer) -> Admin:
    """The admin of the app running in this process (one database for the session's fast tests)."""
    return in_process.admin


@pytest.fixture
def market(app_admin: Admin) -> Iterator[Market]:
    """Accounts and tasks over in-process HTTP; after each test the ledger must still balance."""
    market = Market(app_admin)
    yield market
    check = market.ledger_check()
    assert check["balanced"] and check["totalCents"] == 0, check
