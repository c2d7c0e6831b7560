"""Role-only site pages: sign-in first, then (for forms) the CSRF check, then the role."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support.api import IN_PROCESS, Admin

PASSWORD = "correct horse battery staple"


@pytest.fixture
def browser(app_admin: Admin) -> Iterator[httpx.Client]:
    with httpx.Client(transport=IN_PROCESS[app_admin.base_url], base_url=app_admin.base_url) as client:
        yield client


def _token(browser: httpx.Client, path: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', browser.get(path).text)
    assert found is not None
    return found.group(1)


def test_a_visitor_not_signed_in_is_sent_to_log_in(browser: httpx.Client) -> None:
    for path in ("/publish/", "/review/", "/appeals/"):
        answer = browser.get(path)
        assert answer.status_code in (302, 303, 307) and answer.headers["location"].startswith("/login"), path


def test_an_operator_is_refused_the_publisher_and_reviewer_pages(browser: httpx.Client) -> None:
    email = f"roles-{uuid.uuid4().hex[:8]}@example.com"
    signup = browser.post("/signup", data={"email": email, "password": PASSWORD, "password_again": PASSWORD,
                                           "csrf_token": _token(browser, "/signup")})
    assert signup.status_code == 303
    for path, role in (("/publish/", "publisher"), ("/review/", "reviewer"), ("/appeals/", "reviewer")):
        answer = browser.get(path)
        assert answer.status_code == 403 and f"This page is for {role} accounts." in answer.text, path
    token = _token(browser, "/bots/")
    for path in ("/review/claims/clm_x", "/appeals/apl_x", "/publish/", "/publish/tasks/tsk_x/cancel"):
        forged = browser.post(path, data={"decision": "accept", "csrf_token": "forged"})
        assert forged.status_code == 403 and "did not come from this site" in forged.text, path
        refused = browser.post(path, data={"decision": "accept", "csrf_token": token})
        assert refused.status_code == 403 and "accounts." in refused.text, path
