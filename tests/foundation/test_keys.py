"""API keys over HTTP: shown once, stored only as a keyed hash, refused when revoked, expired or
malformed, and never able to grant more than their holder has."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import httpx
import pytest

from tests.support.api import BOT_SCOPES, PROBLEM, Account, Admin, client
from tests.support.db import stored_bytes
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process


def _create_key(account: Account, **body: object) -> dict[str, object]:
    response = account.http.post("/v1/profile/api-keys", json=body,
                                 headers={"Idempotency-Key": str(uuid.uuid4())})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _assert_refused(response: httpx.Response, error: str | None = None) -> dict[str, object]:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"] == PROBLEM
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    if error:
        assert f'error="{error}"' in challenge
    return dict(response.json())


def test_created_key_works_and_is_never_shown_again(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    created = _create_key(operator, kind="user", name="laptop", scopes=["profile:read", "tasks:read"])
    key = str(created["key"])
    secret = key.removeprefix("svc-")
    assert key.startswith("svc-") and len(secret) >= 32
    assert str(created["id"]).startswith("key_")
    assert created["kind"] == "user" and created["botId"] is None and created["expiresAt"] is None
    assert created["scopes"] == ["profile:read", "tasks:read"]

    with client(server.base_url, key) as http:
        me = http.get("/api/auth/me")
        assert me.status_code == 200, me.text
        assert me.json()["keyId"] == created["id"]
        later_answers = [me, http.get("/v1/agent/me"), http.get("/v1/profile"), http.get("/v1/profile/api-keys")]
    later_answers += [operator.http.get("/v1/profile/api-keys"), operator.http.get("/api/auth/me")]
    for answer in later_answers:
        assert answer.status_code == 200, answer.text
        seen = answer.text + repr(answer.headers)
        assert key not in seen and secret not in seen and secret[:-6] not in seen

    listed = [item for item in operator.http.get("/v1/profile/api-keys").json()["data"] if item["id"] == created["id"]]
    assert len(listed) == 1
    assert "key" not in listed[0]
    assert listed[0]["prefix"] == key[:10]  # enough to recognise it, useless to an attacker
    if server.log_path.exists():
        assert secret not in server.log_path.read_text(errors="replace")


def test_the_database_holds_no_key_in_clear(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    bot = operator.bot()  # a bot key, made over HTTP too
    created = _create_key(operator, kind="user", scopes=["profile:read"])
    keys = [str(created["key"]), bot.key, operator.key]
    # Use them, so that every trace they leave (last use, idempotency records) is written.
    for key in keys:
        with client(server.base_url, key) as http:
            assert http.get("/api/auth/me").status_code == 200

    stored = stored_bytes(server)
    # The search reads real data: what is stored about the key is found...
    assert str(created["id"]).encode() in stored
    assert str(created["key"])[:10].encode() in stored
    # ...and no key, nor its secret part, nor the random part before the checksum.
    for key in keys:
        secret = key.removeprefix("svc-")
        for needle in (key, secret, secret[:-6]):
            assert needle.encode() not in stored, f"{needle[:12]}... is stored in clear"


def test_revoked_key_is_refused_at_once(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    created = _create_key(operator, kind="user", scopes=["profile:read"])
    with client(server.base_url, str(created["key"])) as http:
        assert http.get("/api/auth/me").status_code == 200
        revoked = operator.http.delete(f"/v1/profile/api-keys/{created['id']}")
        assert revoked.status_code == 200, revoked.text
        assert revoked.json()["revokedAt"] is not None
        body = _assert_refused(http.get("/api/auth/me"), "invalid_token")
        assert "revoked" in str(body["detail"])
        _assert_refused(http.get("/v1/profile/api-keys"), "invalid_token")
    # Revoking twice is harmless and keeps the first time.
    again = operator.http.delete(f"/v1/profile/api-keys/{created['id']}")
    assert again.status_code == 200 and again.json()["revokedAt"] == revoked.json()["revokedAt"]


def _server_now(admin: Admin) -> datetime:
    """The server's clock (which tests may have moved), read by moving it a millisecond."""
    response = admin.http.post("/v1/admin/clock", json={"seconds": 0.001})
    assert response.status_code == 200, response.text
    return datetime.fromisoformat(response.json()["now"].replace("Z", "+00:00"))


def test_expired_key_is_refused(quiet_server: LiveServer, quiet_admin: Admin) -> None:
    operator = quiet_admin.account("operator")
    expires = _server_now(quiet_admin) + timedelta(hours=1)
    created = _create_key(operator, kind="user", scopes=["profile:read"], expiresAt=expires.isoformat())
    assert created["expiresAt"] is not None
    with client(quiet_server.base_url, str(created["key"])) as http:
        assert http.get("/api/auth/me").status_code == 200
        quiet_admin.advance_clock(3601)
        body = _assert_refused(http.get("/api/auth/me"), "invalid_token")
        assert "expired" in str(body["detail"])


def test_expiry_must_be_a_future_time_with_a_zone(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    for value in ("2001-01-01T00:00:00Z", "2999-01-01T00:00:00", "tomorrow"):
        response = operator.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read"],
                                                                    "expiresAt": value})
        assert response.status_code == 422, (value, response.text)
        assert response.headers["content-type"] == PROBLEM


def test_malformed_and_unknown_keys_are_refused(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    key = operator.key
    last = key[-1]
    bad_checksum = key[:-1] + ("A" if last != "A" else "B")
    cases = {
        "bad checksum": bad_checksum,
        "wrong prefix": "sk-" + key.removeprefix("svc-"),
        "underscore prefix": "svc_" + key.removeprefix("svc-"),
        "truncated": key[:-3],
        "not base62": key[:-8] + "!!" + key[-6:],
        "empty secret": "svc-",
    }
    for name, presented in cases.items():
        with client(server.base_url, presented) as http:
            body = _assert_refused(http.get("/api/auth/me"), "invalid_token")
            assert "malformed" in str(body["detail"]), name
    # Well formed (the checksum holds) but issued by nobody: refused too, for another reason.
    with client(server.base_url, _well_formed_unknown_key()) as http:
        body = _assert_refused(http.get("/v1/agent/me"), "invalid_token")
        assert "not known" in str(body["detail"])
    # No key, and a key sent with another scheme.
    missing = _assert_refused(httpx.get(server.base_url + "/api/auth/me"))
    assert missing["code"] == "unauthenticated"
    basic = httpx.get(server.base_url + "/api/auth/me", headers={"Authorization": f"Basic {key}"})
    assert _assert_refused(basic, "invalid_request")["code"] == "invalid_request"


def _well_formed_unknown_key() -> str:
    from bountyboard.accounts.keys import generate_key

    return generate_key()


def test_last_use_is_recorded(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    created = _create_key(operator, kind="user", scopes=["profile:read"])

    def listed() -> dict[str, object]:
        return next(item for item in operator.http.get("/v1/profile/api-keys").json()["data"]
                    if item["id"] == created["id"])

    assert listed()["lastUsedAt"] is None
    with client(server.base_url, str(created["key"])) as http:
        assert http.get("/api/auth/me").status_code == 200
    assert listed()["lastUsedAt"] is not None


def _key_ids(account: Account) -> set[str]:
    response = account.http.get("/v1/profile/api-keys")
    assert response.status_code == 200, response.text
    return {item["id"] for item in response.json()["data"]}


def test_a_key_cannot_create_a_key_with_scopes_it_lacks(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    narrow = Account(server.base_url, operator.user, operator.new_key(["agent:manage", "profile:read"]),
                     ["agent:manage", "profile:read"])
    before = _key_ids(operator)
    wider = narrow.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read", "tasks:read"]})
    assert wider.status_code == 403, wider.text
    assert wider.json()["code"] == "scope_escalation"
    assert wider.json()["requiredScopes"] == ["tasks:read"]
    # A role's limits hold too: an operator's key never carries publisher or admin scopes.
    for scope in ("tasks:publish", "claims:review", "admin"):
        refused = operator.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": [scope]})
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "scope_not_allowed"
    assert _key_ids(operator) == before
    # Within its own scopes it may.
    same = narrow.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read"]})
    assert same.status_code == 200, same.text


def test_bot_keys_cannot_manage_keys(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    bot = operator.bot()
    before = _key_ids(operator)
    # A bot key never carries agent:manage...
    refused = operator.http.post("/v1/profile/api-keys", json={"kind": "bot", "botId": bot.id,
                                                               "scopes": [*BOT_SCOPES, "agent:manage"]})
    assert refused.status_code == 403 and refused.json()["code"] == "scope_not_allowed"
    # ...so it can neither create nor revoke keys, nor create bots; nor list the operator's keys.
    create = bot.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read"]})
    assert create.status_code == 403 and create.json()["code"] == "insufficient_scope"
    some_key = next(iter(before))
    revoke = bot.http.delete(f"/v1/profile/api-keys/{some_key}")
    assert revoke.status_code == 403 and revoke.json()["code"] == "insufficient_scope"
    new_bot = bot.http.post("/v1/agent/bots", json={"name": "child"})
    assert new_bot.status_code == 403
    listing = bot.http.get("/v1/profile/api-keys")
    assert listing.status_code == 403 and listing.json()["code"] == "user_key_required"
    assert _key_ids(operator) == before


@pytest.mark.parametrize("kind", ["bot", "user"])
def test_created_key_answer_has_the_documented_shape(server: LiveServer, admin: Admin, kind: str) -> None:
    operator = admin.account("operator")
    body: dict[str, object] = {"kind": kind, "scopes": ["tasks:read"]}
    if kind == "bot":
        body["botId"] = operator.bot().id
    created = _create_key(operator, **body)
    assert {"id", "key", "kind", "scopes", "botId", "expiresAt"} <= set(created)
    assert created["kind"] == kind
    with client(server.base_url, str(created["key"])) as http:
        me = http.get("/v1/agent/me").json()
    assert me["actorType"] == kind and me["keyId"] == created["id"] and me["scopes"] == ["tasks:read"]


def test_an_admin_key_grants_only_scopes_it_holds(server: LiveServer, admin: Admin) -> None:
    boss = admin.account("admin", scopes=["admin", "profile:read"])
    operator = admin.account("operator")
    for target in (boss.id, operator.id):
        wider = boss.http.post(f"/v1/admin/users/{target}/api-keys", json={"kind": "user",
                                                                          "scopes": ["tasks:read", "profile:read"]})
        assert wider.status_code == 403 and wider.json()["requiredScopes"] == ["tasks:read"], wider.text
    granted = boss.http.post(f"/v1/admin/users/{operator.id}/api-keys", json={"kind": "user",
                                                                              "scopes": ["profile:read"]})
    assert granted.status_code == 200, granted.text
