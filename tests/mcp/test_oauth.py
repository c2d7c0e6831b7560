"""/mcp as an OAuth 2.1 protected resource, the service its authorization server (docs/security.md, OAuth).

An MCP client without a key (a hosted assistant's connector) finds the metadata from the 401, registers,
gets the operator's consent on the site, exchanges the code with PKCE and works the loop with the token: an
API key of the bot the operator picked, with the scopes they ticked, refused once revoked.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tests.client.loop import WORKER_SCOPES, Marketplace
from tests.files.samples import png
from tests.mcp.oauth import REDIRECT_URI, MemoryStorage, Operator, consent, oauth_client, signed_in_browser
from tests.mcp.support import answer, http_client, problem
from tests.support.api import Admin, expect_problem
from tests.support.server import LiveServer

MCP_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def _metadata_url(base_url: str) -> str:
    return f"{base_url}/.well-known/oauth-protected-resource/mcp"


def _refused_with_challenge(server: LiveServer, headers: dict[str, str], code: str) -> None:
    refused = httpx.post(f"{server.base_url}/mcp", json=MCP_CALL, headers={**MCP_HEADERS, **headers}, timeout=30)
    expect_problem(refused, 401, code)
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and f'resource_metadata="{_metadata_url(server.base_url)}"' in challenge


def test_a_missing_or_bad_token_is_a_401_pointing_to_the_resource_metadata(loop_server: tuple[LiveServer, Admin],
                                                                         market: Marketplace) -> None:
    server, _ = loop_server
    _refused_with_challenge(server, {}, "unauthenticated")
    _refused_with_challenge(server, {"Authorization": "Bearer not-a-token"}, "invalid_token")
    _refused_with_challenge(server, {"Authorization": "Bearer svc-" + "0" * 38}, "invalid_token")

    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        resource = httpx.get(f"{server.base_url}{path}", timeout=30)
        assert resource.status_code == 200, resource.text
        assert resource.json()["resource"] == f"{server.base_url}/mcp"
        assert resource.json()["authorization_servers"] == [server.base_url]
        assert set(WORKER_SCOPES) <= set(resource.json()["scopes_supported"])
    issuer = httpx.get(f"{server.base_url}/.well-known/oauth-authorization-server", timeout=30).json()
    assert issuer["issuer"] == server.base_url
    assert issuer["code_challenge_methods_supported"] == ["S256"]
    assert issuer["response_types_supported"] == ["code"]
    assert issuer["registration_endpoint"] == f"{server.base_url}/register"
    assert issuer["authorization_endpoint"] == f"{server.base_url}/authorize"

    # svc- keys keep working.
    async def listed() -> list[str]:
        async with http_client(server.base_url, market.bot.key) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "claim_task" in asyncio.run(listed())


def test_the_sdks_oauth_client_registers_gets_consent_and_works_the_loop_until_revoked(
        loop_server: tuple[LiveServer, Admin], market: Marketplace) -> None:
    server, _ = loop_server
    task = market.publish("fun")
    operator = Operator(server.base_url, market.operator, market.bot.bot["id"], WORKER_SCOPES)
    storage = MemoryStorage()

    async def work() -> dict[str, object]:
        async with oauth_client(server.base_url, operator, storage) as client:
            listed = answer(await client.call_tool("list_tasks", {}))
            assert task["id"] in [item["id"] for item in listed["data"]]
            claim = answer(await client.call_tool("claim_task", {"task_id": task["id"]}))
            image = base64.b64encode(png()).decode()
            upload = answer(await client.call_tool("upload_file", {
                "claim_id": claim["claimId"], "file_name": "haiku.png", "content_base64": image}))
            return answer(await client.call_tool("submit_result", {
                "claim_id": claim["claimId"], "result_type": "image", "content": "An old silent pond.",
                "attachments": [{"type": "image", "fileKey": upload["fileKey"]}]}))

    receipt = asyncio.run(work())
    assert operator.consents == 1
    assert storage.tokens is not None and storage.client_info is not None
    assert sorted((storage.tokens.scope or "").split()) == sorted(WORKER_SCOPES)
    submitted = market.wait_for_submission(task["id"])
    assert submitted["submission"]["id"] == receipt["submissionId"]
    [attachment] = submitted["submission"]["attachments"]
    assert (attachment["fileName"], attachment["mimeType"], attachment["sizeBytes"]) == ("haiku.png", "image/png",
                                                                                         len(png()))
    # The token is a key of the bot the operator picked, listed with the operator's keys, and revoked like one.
    token = storage.tokens.access_token
    keys = market.operator.http.get("/v1/profile/api-keys").json()["data"]
    [issued] = [key for key in keys if key["name"] == "OAuth: assistant under test"]
    assert (issued["kind"], issued["botId"], sorted(issued["scopes"])) == ("bot", market.bot.bot["id"],
                                                                          sorted(WORKER_SCOPES))
    assert issued["expiresAt"] is not None
    revoked = market.operator.http.delete(f"/v1/profile/api-keys/{issued['id']}")
    assert revoked.status_code == 200, revoked.text
    _refused_with_challenge(server, {"Authorization": f"Bearer {token}"}, "invalid_token")


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def test_redirect_uris_match_exactly_codes_are_single_use_and_pkce_is_checked(
        loop_server: tuple[LiveServer, Admin], market: Marketplace) -> None:
    server, _ = loop_server
    base = server.base_url
    registered = httpx.post(f"{base}/register", json={"client_name": "by hand", "redirect_uris": [REDIRECT_URI]},
                            timeout=30)
    assert registered.status_code == 201, registered.text
    client_id, client_secret = registered.json()["client_id"], registered.json()["client_secret"]
    verifier, challenge = _pkce()
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "state": "s-1",
             "code_challenge": challenge, "code_challenge_method": "S256", "scope": " ".join(WORKER_SCOPES)}

    # A redirect URI that is not the registered one, to the letter, is refused without a redirect.
    for other in (REDIRECT_URI + "/", REDIRECT_URI + "?x=1", "http://127.0.0.1:9/callbacks"):
        refused = httpx.get(f"{base}/authorize?{urlencode({**query, 'redirect_uri': other})}", timeout=30)
        assert refused.status_code == 400 and "location" not in refused.headers, refused.text
    # PKCE is required, and only S256.
    plain = httpx.get(f"{base}/authorize?{urlencode({**query, 'code_challenge_method': 'plain'})}", timeout=30)
    assert "error=invalid_request" in plain.headers.get("location", "")

    with signed_in_browser(base, market.operator.user["email"]) as browser:
        # The consent form needs the session's CSRF token; a forged post issues nothing.
        page = browser.get(f"{base}/authorize?{urlencode(query)}", follow_redirects=True)
        sealed = parse_qs(urlsplit(str(page.url)).query)["request"][0]
        forged = browser.post("/oauth/consent", data={"request": sealed, "bot_id": market.bot.bot["id"],
                                                      "scopes": WORKER_SCOPES, "decision": "allow"})
        assert forged.status_code == 403 and "location" not in forged.headers
        # An altered request is refused.
        altered = browser.get("/oauth/consent", params={"request": sealed[:-4] + "AAAA"})
        assert altered.status_code == 400
        # Denying sends the client access_denied and its state.
        denied = consent(browser, f"{base}/authorize?{urlencode(query)}", market.bot.bot["id"], WORKER_SCOPES,
                         decision="deny")
        assert parse_qs(urlsplit(denied.headers["location"]).query) == {"error": ["access_denied"], "state": ["s-1"]}
        allowed = consent(browser, f"{base}/authorize?{urlencode(query)}", market.bot.bot["id"], WORKER_SCOPES)
    answered = parse_qs(urlsplit(allowed.headers["location"]).query)
    assert allowed.headers["location"].startswith(REDIRECT_URI + "?") and answered["state"] == ["s-1"]
    code = answered["code"][0]

    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
                "client_id": client_id, "client_secret": client_secret, "code_verifier": verifier}
    wrong_secret = httpx.post(f"{base}/token", data={**exchange, "client_secret": "guessed"}, timeout=30)
    assert (wrong_secret.status_code, wrong_secret.json()["error"]) == (401, "invalid_client")
    wrong_verifier = httpx.post(f"{base}/token", data={**exchange, "code_verifier": _pkce()[0]}, timeout=30)
    assert (wrong_verifier.status_code, wrong_verifier.json()["error"]) == (400, "invalid_grant")
    token = httpx.post(f"{base}/token", data=exchange, timeout=30)
    assert token.status_code == 200, token.text
    assert token.json()["token_type"] == "Bearer" and token.json()["expires_in"] == 3600
    again = httpx.post(f"{base}/token", data=exchange, timeout=30)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")

    # The token works on /mcp, and its client can revoke it (RFC 7009).
    access = token.json()["access_token"]
    works = httpx.post(f"{base}/mcp", json=MCP_CALL, headers={**MCP_HEADERS, "Authorization": f"Bearer {access}"},
                       timeout=30)
    assert works.status_code == 200, works.text
    revoked = httpx.post(f"{base}/revoke", data={"token": access, "client_id": client_id,
                                                 "client_secret": client_secret}, timeout=30)
    assert revoked.status_code == 200, revoked.text
    _refused_with_challenge(server, {"Authorization": f"Bearer {access}"}, "invalid_token")


def test_upload_file_refuses_what_is_not_base64_or_too_large_and_uploads_nothing(
        loop_server: tuple[LiveServer, Admin], market: Marketplace) -> None:
    server, _ = loop_server
    task = market.publish("fun")
    claimed = market.bot.http.post(f"/v1/agent/tasks/{task['id']}/claim")
    claim_id = claimed.json()["claimId"]

    async def refusals() -> list[dict[str, object]]:
        async with http_client(server.base_url, market.bot.key) as client:
            calls = [{"content_base64": "not base64!"},
                     {"content_base64": base64.b64encode(b"x" * (512 * 1024 + 1)).decode()}]
            return [problem(await client.call_tool("upload_file", {"claim_id": claim_id, "file_name": "a.txt",
                                                                   **call})) for call in calls]

    refused = asyncio.run(refusals())
    assert [(item["status"], item["code"]) for item in refused] == [(422, "invalid_file_content"),
                                                                    (422, "file_too_large")]
    assert market.claims_of(task["id"])[0]["submission"] is None
