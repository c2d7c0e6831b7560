"""Sign-up, keys shown once and revoked, bots, log-out and log-in, CSRF and the log-in limit."""

from __future__ import annotations

import re
import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.site.conftest import PASSWORD, log_in, shoot
from tests.support.server import LiveServer


def test_sign_up_create_key_once_and_revoke(page: Page, server: LiveServer) -> None:
    email = f"site-{uuid.uuid4().hex[:8]}@example.com"
    page.goto("/signup")
    shoot(page, server, "signup")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Display name").fill("Ada <b>Operator</b>")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(re.compile(r".*/profile/$"))
    expect(page.get_by_text("Ada <b>Operator</b> · operator")).to_be_visible()  # escaped, not markup

    page.get_by_role("link", name="Bots", exact=True).click()
    page.get_by_label("Name").fill("worker-1")
    page.get_by_label("Description").fill("translates things")
    page.get_by_role("button", name="Create bot").click()
    expect(page.get_by_role("cell", name=re.compile("worker-1"))).to_be_visible()
    shoot(page, server, "bots")

    page.get_by_role("link", name="Profile", exact=True).click()
    for scope in ("tasks:read", "tasks:claim", "claims:read", "claims:submit"):
        expect(page.get_by_role("checkbox", name=re.compile(scope))).to_be_checked()
    expect(page.get_by_role("checkbox", name=re.compile("webhooks:manage"))).not_to_be_checked()
    page.get_by_label("Name").fill("ci worker")
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_test_id("new-key").inner_text()
    assert secret.startswith("svc-")
    expect(page.get_by_role("button", name="Copy")).to_be_visible()
    shoot(page, server, "profile-new-key")
    expect(page.locator("tr", has_text="ci worker").locator("td").nth(4)).to_have_text("never")

    bot_key = httpx.get(server.base_url + "/v1/agent/me", headers={"Authorization": f"Bearer {secret}"})
    assert bot_key.status_code == 200 and bot_key.json()["bot"]["name"] == "worker-1"
    assert bot_key.json()["scopes"] == ["claims:read", "claims:submit", "tasks:claim", "tasks:read"]

    page.reload()  # the page replaced its history entry: a reload fetches the page, it does not re-post
    expect(page.get_by_role("heading", name="Your keys")).to_be_visible()
    assert secret not in page.content()
    row = page.locator("tr", has_text="ci worker")
    expect(row.locator("td").nth(4)).to_have_text("just now")  # "Last used": the call above
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name=re.compile("Revoke")).click()
    expect(row.get_by_text("revoked")).to_be_visible()
    shoot(page, server, "profile-revoked")
    after = httpx.get(server.base_url + "/v1/agent/me", headers={"Authorization": f"Bearer {secret}"})
    assert after.status_code == 401

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r".*/$"))
    page.goto("/profile/")
    page.wait_for_url(re.compile(r".*/login\?next=/profile/$"))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("wrong password!")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("wrong")
    shoot(page, server, "login-failed")
    log_in(page, email)


def test_session_cookie_flags_and_csrf(server: LiveServer) -> None:
    email = f"csrf-{uuid.uuid4().hex[:8]}@example.com"
    with httpx.Client(base_url=server.base_url) as browser:
        browser.get("/signup")
        token = browser.cookies["bb_csrf"]
        refused = browser.post("/signup", data={"email": email, "password": PASSWORD, "password_again": PASSWORD})
        assert refused.status_code == 403 and "did not come from this site" in refused.text
        made = browser.post("/signup", data={"email": email, "password": PASSWORD, "password_again": PASSWORD,
                                             "csrf_token": token})
        assert made.status_code == 303
        cookie = made.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie  # site URL is http
        # Signed in, the session's own token is required; the anonymous one no longer works.
        forged = browser.post("/bots/", data={"name": "x", "csrf_token": token})
        assert forged.status_code == 403
        page = browser.get("/bots/").text
        session_token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert session_token is not None
        ok = browser.post("/bots/", data={"name": "x", "csrf_token": session_token.group(1)})
        assert ok.status_code == 303
        # After log-in only same-site paths are followed: no open redirect.
        for target, expected in (("//evil.example/x", "/profile/"), ("/\t/evil.example", "/profile/"),
                                 ("https://evil.example/", "/profile/"), ("/bots/?page=2", "/bots/?page=2")):
            form = re.search(r'name="csrf_token" value="([^"]+)"', browser.get("/login").text)
            assert form is not None
            again = browser.post("/login", data={"email": email, "password": PASSWORD, "next": target,
                                                 "csrf_token": form.group(1)})
            assert again.status_code == 303 and again.headers["location"] == expected, target


def test_log_in_attempts_are_limited(server: LiveServer) -> None:
    email = f"limit-{uuid.uuid4().hex[:8]}@example.com"
    refused: list[int] = []
    with httpx.Client(base_url=server.base_url) as browser:
        browser.get("/login")
        token = browser.cookies["bb_csrf"]
        # Failures slow the address for this account from the 5th in a sliding minute (docs/security.md);
        # a window may end mid-test, so allow a few more.
        for _ in range(21):
            answer = browser.post("/login", data={"email": email, "password": "nope-nope-nope", "csrf_token": token})
            if answer.status_code == 429:
                break
            refused.append(answer.status_code)
    assert answer.status_code == 429 and int(answer.headers["retry-after"]) > 0
    assert set(refused) == {401} and 5 <= len(refused) <= 10


def test_security_headers_on_pages_and_api(server: LiveServer) -> None:
    for path in ("/login", "/v1/meta/openapi.json", "/api/auth/me", "/static/site.css"):
        headers = httpx.get(server.base_url + path).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy, path
        assert "unsafe-inline" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "strict-origin-when-cross-origin"
