"""Webhook signing secrets are encrypted at rest under a key derived from the server secret; rows
written in clear before are encrypted by the migration; the server secret can be rotated."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.events.conftest import FAST, Hooks, admin_of
from tests.events.helpers import account, emit, query, subscribe
from tests.events.receiver import Receiver
from tests.support.api import OPERATOR_SCOPES, Account
from tests.support.db import stored_bytes
from tests.support.server import LiveServer, backends, database_url


def _delivered_and_verified(receiver: Receiver, admin_server: LiveServer, operator_id: str,
                            *secrets: str) -> None:
    """One new event reaches the receiver, and its signature verifies with each of ``secrets``."""
    before = len(receiver.received)
    event = emit(admin_of(admin_server), "claim.reviewed", operatorId=operator_id)[0]
    got = receiver.wait_until(lambda r: any(x.id == event["id"] for x in r[before:]))
    request = next(x for x in got[before:] if x.id == event["id"])
    for secret in secrets:
        assert request.verified(secret)["type"] == "claim.reviewed"


def test_no_signing_secret_is_stored_in_clear(hooks: Hooks) -> None:
    operator = account(hooks.admin)
    with Receiver() as receiver:
        hook = subscribe(operator, receiver.url, ["claim.reviewed"])
        _delivered_and_verified(receiver, hooks.server, operator.id, hook["secret"])
        rotated = operator.http.post(f"/v1/agent/webhooks/{hook['id']}/rotate-secret")
        assert rotated.status_code == 200, rotated.text
        new_secret = rotated.json()["secret"]
        # During the overlap both the replaced and the new secret sign, each read back from its token.
        _delivered_and_verified(receiver, hooks.server, operator.id, hook["secret"], new_secret)
    stored = stored_bytes(hooks.server)
    assert b"whsec_" not in stored
    for secret in (hook["secret"], new_secret):
        assert secret.removeprefix("whsec_").encode() not in stored


def _alembic(server: LiveServer, command: str, target: str) -> None:
    code = ("from alembic import command; from bountyboard.storage.migrations import alembic_config; "
            f"command.{command}(alembic_config(), {target!r})")
    result = subprocess.run([sys.executable, "-c", code], env=server.env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _stored_secret(url: str, webhook_id: str) -> str:
    return str(query(url, "SELECT secret FROM webhook_endpoints WHERE id = %s", webhook_id)[0][0])


@pytest.mark.parametrize("backend", backends())
def test_the_migration_encrypts_secrets_kept_in_clear(backend: str, tmp_path: Path) -> None:
    env = {**FAST, "BOUNTYBOARD_SECRET_KEY": "migrate-" + uuid.uuid4().hex}
    with database_url(backend, tmp_path) as url, Receiver() as receiver:
        with LiveServer(tmp_path, url, env=env) as server:
            operator = account(admin_of(server))
            hook = subscribe(operator, receiver.url, ["claim.reviewed"])
        assert _stored_secret(url, hook["id"]) != hook["secret"]

        # Back to the webhooks schema before encryption: the secret is in clear, as older releases kept it.
        _alembic(server, "downgrade", "0003_webhooks")
        assert _stored_secret(url, hook["id"]) == hook["secret"]

        with LiveServer(tmp_path, url, env=env) as server:  # starting applies the migration
            assert "whsec_" not in _stored_secret(url, hook["id"])
            _delivered_and_verified(receiver, server, operator.id, hook["secret"])
        # No copy in clear is left behind either (SQLite: freed pages, the write-ahead log).
        stored = stored_bytes(server)
        assert b"whsec_" not in stored and hook["secret"].removeprefix("whsec_").encode() not in stored


def _new_key(server: LiveServer, operator: Account) -> Account:
    """API keys are hashed under the server secret too: a rotation asks for new ones."""
    key = server.cli("admin", "create-key", operator.user["email"], "--scopes", ",".join(OPERATOR_SCOPES)).strip()
    return Account(server.base_url, operator.user, key, OPERATOR_SCOPES)


@pytest.mark.parametrize("backend", backends())
def test_the_server_secret_can_be_rotated(backend: str, tmp_path: Path) -> None:
    old, new = "old-" + uuid.uuid4().hex, "new-" + uuid.uuid4().hex
    with database_url(backend, tmp_path) as url, Receiver() as receiver:
        with LiveServer(tmp_path, url, env={**FAST, "BOUNTYBOARD_SECRET_KEY": old}) as server:
            operator = account(admin_of(server))
            hook = subscribe(operator, receiver.url, ["claim.reviewed"])
        before = _stored_secret(url, hook["id"])

        # The new secret in use, the old one still read.
        rotating = {**FAST, "BOUNTYBOARD_SECRET_KEY": new, "BOUNTYBOARD_PREVIOUS_SECRET_KEY": old}
        with LiveServer(tmp_path, url, env=rotating) as server:
            _delivered_and_verified(receiver, server, operator.id, hook["secret"])
            assert "re-encrypted the signing secrets of 1 webhook" in server.cli("db", "reencrypt")
        assert _stored_secret(url, hook["id"]) != before

        # The old secret gone: everything stored was moved to the new one.
        with LiveServer(tmp_path, url, env={**FAST, "BOUNTYBOARD_SECRET_KEY": new}) as server:
            _delivered_and_verified(receiver, server, operator.id, hook["secret"])
            listed = _new_key(server, operator).http.get(f"/v1/agent/webhooks/{hook['id']}")
            assert listed.status_code == 200, listed.text
