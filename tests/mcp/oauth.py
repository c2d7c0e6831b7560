"""An MCP client that connects with OAuth, as hosted assistants do: the SDK's own OAuth client, with the operator's
browser played headlessly by an httpx client (sign in, follow the authorization URL to the consent page, pick
the bot and the scopes, hand the code back)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.support.api import Account

PASSWORD = "correct horse battery"  # tests.support.api.Admin.account's
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the browser below reads the redirect itself


@dataclass
class MemoryStorage:
    """The client's tokens and registration, in memory."""

    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def form_value(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field in the page"
    return found.group(1)


@contextmanager
def signed_in_browser(base_url: str, email: str) -> Iterator[httpx.Client]:
    """A browser session of the operator ``email`` on the site."""
    with httpx.Client(base_url=base_url, timeout=30) as browser:
        login = browser.get("/login")
        signed_in = browser.post("/login", data={"csrf_token": form_value(login.text, "csrf_token"), "email": email,
                                                 "password": PASSWORD, "next": "/profile/"})
        assert signed_in.status_code == 303, signed_in.text
        yield browser


def consent(browser: httpx.Client, authorization_url: str, bot_id: str, scopes: list[str],
            decision: str = "allow") -> httpx.Response:
    """Follow the authorization URL to the consent page and answer it; the answer is the redirect to the client."""
    page = browser.get(authorization_url, follow_redirects=True)
    assert page.status_code == 200 and urlsplit(str(page.url)).path == "/oauth/consent", (page.status_code, page.url)
    return browser.post("/oauth/consent", data={
        "csrf_token": form_value(page.text, "csrf_token"), "request": form_value(page.text, "request"),
        "bot_id": bot_id, "scopes": scopes, "decision": decision})


@dataclass
class Operator:
    """The operator's side of the flow: what the SDK's redirect and callback handlers do."""

    base_url: str
    account: Account
    bot_id: str
    scopes: list[str]
    consents: int = 0
    redirected_to: list[str] = field(default_factory=list)

    async def redirect(self, authorization_url: str) -> None:
        with signed_in_browser(self.base_url, self.account.user["email"]) as browser:
            answered = consent(browser, authorization_url, self.bot_id, self.scopes)
        assert answered.status_code == 303, answered.text
        self.redirected_to.append(answered.headers["location"])
        self.consents += 1

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.redirected_to[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])


def oauth_client(base_url: str, operator: Operator, storage: MemoryStorage) -> Client:
    """An MCP client of ``{base_url}/mcp`` with no key: it registers, gets the operator's consent and a token."""
    auth = OAuthClientProvider(
        server_url=f"{base_url}/mcp",
        client_metadata=OAuthClientMetadata(client_name="assistant under test", redirect_uris=[REDIRECT_URI]),
        storage=storage, redirect_handler=operator.redirect, callback_handler=operator.callback)
    transport = streamable_http_client(f"{base_url}/mcp", http_client=httpx2.AsyncClient(auth=auth, timeout=60))
    return Client(transport)
