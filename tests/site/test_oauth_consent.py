"""The OAuth consent page in a real browser: sign in, pick the bot and scopes, and the browser lands on the client's
redirect URI (another origin) with the code, which the page's Content-Security-Policy must let through."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from playwright.sync_api import Page, Route

from tests.site.conftest import PASSWORD
from tests.support.api import Admin
from tests.support.server import LiveServer, free_port

WORKER_SCOPES = ["tasks:read", "tasks:claim", "claims:read", "claims:submit"]


def test_the_operator_consents_in_a_browser_and_it_goes_back_to_the_client(page: Page, server: LiveServer,
                                                                          admin: Admin) -> None:
    operator = admin.account("operator")
    bot = operator.bot()
    callback = f"http://127.0.0.1:{free_port()}/callback"
    registered = httpx.post(f"{server.base_url}/register", timeout=30, json={
        "client_name": "browser-test assistant", "redirect_uris": [callback], "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    query = {"response_type": "code", "client_id": registered.json()["client_id"], "redirect_uri": callback,
             "state": "st-42", "code_challenge": challenge, "code_challenge_method": "S256",
             "scope": " ".join(WORKER_SCOPES)}
    landed: list[str] = []

    def client_callback(route: Route) -> None:
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>connected</p>")

    page.route(re.compile(re.escape(callback) + r".*"), client_callback)
    page.goto(f"/authorize?{urlencode(query)}")
    # Not signed in: the log-in page first, then the consent page.
    page.get_by_label("Email").fill(operator.user["email"])
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r".*/oauth/consent\?request=.*"))
    assert page.get_by_role("heading", name="Connect browser-test assistant").is_visible()
    page.get_by_label("Bot").select_option(bot.bot["id"])
    page.get_by_role("checkbox", name=re.compile("claims:read")).uncheck()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(re.compile(re.escape(callback) + r"\?.*"))

    [url] = landed
    answered = parse_qs(urlsplit(url).query)
    assert answered["state"] == ["st-42"]
    token = httpx.post(f"{server.base_url}/token", timeout=30, data={
        "grant_type": "authorization_code", "code": answered["code"][0], "redirect_uri": callback,
        "client_id": registered.json()["client_id"], "code_verifier": verifier})
    assert token.status_code == 200, token.text
    assert sorted(token.json()["scope"].split()) == sorted(set(WORKER_SCOPES) - {"claims:read"})
