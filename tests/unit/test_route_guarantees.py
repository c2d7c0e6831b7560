"""Who may call what is declared by each route's dependencies; test-only routes exist only in test deployments."""

from __future__ import annotations

import pytest
from fastapi.routing import iter_route_contexts
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import app as app_module
from bountyboard.accounts.models import User
from bountyboard.app import create_app
from bountyboard.cli.ops import run_with_session
from bountyboard.config import get_settings
from tests.support.api import Admin, expect_problem

TEST_ONLY = {("POST", "/v1/admin/clock"), ("POST", "/v1/admin/test/hold"), ("POST", "/v1/admin/events")}
# Every admin operation with a body it would accept: only the caller's role is wrong.
ADMIN_OPERATIONS = [
    ("POST", "/v1/admin/users", {"email": "never-made@example.com"}),
    ("POST", "/v1/admin/users/usr_missing/api-keys", {"scopes": ["profile:read"]}),
    ("POST", "/v1/admin/credit", {"email": "never-made@example.com", "amount": "1"}),
    ("GET", "/v1/admin/ledger/check", None),
    ("PUT", "/v1/admin/bench/benchmarks/never-made", {}),
    ("POST", "/v1/admin/bench/runs/run_missing/retract", {"reason": "no"}),
    ("POST", "/v1/admin/clock", {"seconds": 1}),
    ("POST", "/v1/admin/test/hold", {"seconds": 0.01}),
    ("POST", "/v1/admin/events", {"type": "task.published"}),
]


@pytest.mark.parametrize("enabled", [True, False])
def test_test_only_routes_are_mounted_only_with_the_test_setting(monkeypatch: pytest.MonkeyPatch,
                                                                 enabled: bool) -> None:
    settings = get_settings().model_copy(update={"enable_test_clock": enabled})
    monkeypatch.setattr(app_module, "get_settings", lambda: settings)
    operations = {(method, route.path_format) for route in iter_route_contexts(create_app().routes)
                  for method in route.methods or ()}
    assert (operations & TEST_ONLY) == (TEST_ONLY if enabled else set())


def test_an_admin_key_of_a_former_admin_is_refused_by_every_admin_operation(app_admin: Admin) -> None:
    former = app_admin.account("admin")

    async def demote(session: AsyncSession) -> None:
        await session.execute(update(User).where(User.id == former.id).values(role="operator"))
        await session.commit()

    run_with_session(demote)  # the key still carries the admin scope; the role no longer allows it
    for method, path, body in ADMIN_OPERATIONS:
        expect_problem(former.http.request(method, path, json=body), 403, "role_required")
    assert app_admin.http.get("/v1/admin/ledger/check").json()["balanced"]

