"""The operating names of DESIGN.md section 10: serve, worker, db upgrade, the admin bootstrap,
admin create-user and create-key, /healthz and /readyz; and the request log."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher

from tests.support.api import Admin, client
from tests.support.db import table_rows
from tests.support.server import ADMIN_EMAIL, LiveServer, backends, database_url, psycopg_dsn

GENERATED = re.compile(r"Created the first admin: (\S+)  password: (\S+)")


def _password_hash(server: LiveServer, email: str) -> str:
    users = table_rows(server)["users"]
    # Column order of the users table: id, email, display_name, password_hash, role, ...
    return str(next(row[3] for row in users if row[1] == email))


def _execute(server: LiveServer, *statements: str) -> None:
    """Change the server's database behind its back (to break it on purpose)."""
    if server.backend == "sqlite":
        connection = sqlite3.connect(server.db_url.split(":///", 1)[1])
        for statement in statements:
            connection.execute(statement)
        connection.commit()
        connection.close()
        return
    import psycopg2

    connection = psycopg2.connect(psycopg_dsn(server.db_url))
    connection.autocommit = True
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    connection.close()


def test_health_and_readiness(server: LiveServer) -> None:
    health = httpx.get(server.base_url + "/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    ready = httpx.get(server.base_url + "/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "database": server.backend,
                            "rateLimitStorage": {"failedOpen": 0, "refused": 0}}


def test_first_start_prints_generated_admin_credentials_once(tmp_path: Path) -> None:
    # The embedded default: no admin in the environment, no secret key (kept in the data directory).
    unset: dict[str, str | None] = {"BOUNTYBOARD_ADMIN_EMAIL": None, "BOUNTYBOARD_ADMIN_PASSWORD": None,
                                    "BOUNTYBOARD_SECRET_KEY": None}
    with database_url("sqlite", tmp_path) as url:
        live = LiveServer(tmp_path, url, env=unset)
        with live:
            printed = GENERATED.findall(live.log_path.read_text())
            assert len(printed) == 1, live.log_path.read_text()
            email, password = printed[0]
            assert email == "admin@localhost"
            assert PasswordHasher().verify(_password_hash(live, email), password)
            key = live.cli("admin", "create-key", email, "--scopes", "profile:read,admin").strip()
            with client(live.base_url, key) as http:
                assert http.get("/api/auth/me").json()["role"] == "admin"
        secret = tmp_path / "secret_key"
        assert secret.exists() and secret.stat().st_mode & 0o077 == 0
        with live:  # a second start on the same data: no new admin, nothing printed, keys still valid
            assert len(GENERATED.findall(live.log_path.read_text())) == 1
            with client(live.base_url, key) as http:
                assert http.get("/api/auth/me").status_code == 200


def test_admin_comes_from_the_environment(server: LiveServer, admin: Admin) -> None:
    me = admin.http.get("/api/auth/me").json()
    assert me["email"] == ADMIN_EMAIL and me["role"] == "admin" and me["actorType"] == "user"
    assert not GENERATED.search(server.log_path.read_text())


def test_admin_create_user(server: LiveServer) -> None:
    email = f"pub-{uuid.uuid4().hex[:8]}@example.com"
    output = server.cli("admin", "create-user", email, "--role", "publisher", "--password-stdin",
                        input="a long enough password\n")
    assert re.search(rf"created publisher {re.escape(email)} \(usr_[0-9a-z]{{26}}\)", output)
    assert "password:" not in output
    assert PasswordHasher().verify(_password_hash(server, email), "a long enough password")

    again = server.run_cli("admin", "create-user", email, "--role", "publisher", "--password-stdin",
                           input="a long enough password\n")
    assert again.returncode == 1 and "already exists" in again.stderr
    if server.backend == "sqlite":  # refused while parsing the arguments, before any database is touched
        assert server.run_cli("admin", "create-user", "x@example.com", "--role", "emperor").returncode == 2
    short = server.run_cli("admin", "create-user", "y@example.com", "--password-stdin", input="short\n")
    assert short.returncode == 1 and "at least" in short.stderr

    generated_email = f"op-{uuid.uuid4().hex[:8]}@example.com"
    generated = server.cli("admin", "create-user", generated_email, "--role", "operator")
    password = re.search(r"password: (\S+)", generated)
    assert password is not None
    assert PasswordHasher().verify(_password_hash(server, generated_email), password.group(1))


def test_admin_create_key(server: LiveServer) -> None:
    email = f"op-{uuid.uuid4().hex[:8]}@example.com"
    server.cli("admin", "create-user", email, "--role", "operator")
    bot_key = server.cli("admin", "create-key", email, "--bot", "night-shift", "--scopes", "tasks:read,claims:read")
    assert re.fullmatch(r"svc-[0-9A-Za-z]{38}\n", bot_key)  # the key alone, for automation
    with client(server.base_url, bot_key.strip()) as http:
        me = http.get("/v1/agent/me").json()
    assert me["actorType"] == "bot" and me["bot"]["name"] == "night-shift"
    assert me["scopes"] == ["claims:read", "tasks:read"]
    # The same bot name again: the existing bot gets another key.
    server.cli("admin", "create-key", email, "--bot", "night-shift", "--scopes", "tasks:read")
    user_key = server.cli("admin", "create-key", email, "--scopes", "agent:manage,profile:read").strip()
    with client(server.base_url, user_key) as http:
        assert [bot["name"] for bot in http.get("/v1/agent/bots").json()["data"]] == ["night-shift"]
        assert len(http.get("/v1/profile/api-keys").json()["data"]) == 3

    assert server.run_cli("admin", "create-key", "nobody@example.com", "--scopes", "tasks:read").returncode == 1
    if server.backend == "sqlite":  # refused while parsing the arguments, before any database is touched
        assert server.run_cli("admin", "create-key", email, "--scopes", "tasks:fly").returncode == 2
    beyond_role = server.run_cli("admin", "create-key", email, "--scopes", "tasks:publish")
    assert beyond_role.returncode == 1 and "cannot carry" in beyond_role.stderr


@pytest.mark.parametrize("backend", backends())
def test_db_upgrade(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        offline = LiveServer(tmp_path, url)  # never started: the command works on the database alone
        for _ in range(2):
            assert "database is up to date" in offline.cli("db", "upgrade")
        tables = set(table_rows(offline))
        assert {"users", "bots", "api_keys", "idempotency_records", "events"} <= tables


def test_worker_runs_until_told_to_stop(server: LiveServer) -> None:
    worker = subprocess.Popen([sys.executable, "-m", "bountyboard", "worker"], env=server.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert worker.stdout is not None
        seen = []  # it says so once it is running and listening for signals (log lines may come first)
        for line in worker.stdout:
            seen.append(line)
            if line.startswith("bountyboard worker running: "):
                break
        assert seen and seen[-1].startswith("bountyboard worker running: "), "".join(seen)
        time.sleep(1)
        assert worker.poll() is None
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


@pytest.fixture(params=backends())
def logged_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """A private server logging every request, that a test may break."""
    with database_url(request.param, tmp_path) as url, \
            LiveServer(tmp_path, url, env={"BOUNTYBOARD_LOG_LEVEL": "INFO"}) as live:
        yield live


def test_request_log_and_unexpected_errors(logged_server: LiveServer) -> None:
    live = logged_server
    admin = Admin.of(live)
    operator = admin.account("operator")
    assert httpx.get(live.base_url + "/healthz", headers={"X-Request-Id": "probe-1"}).status_code == 200

    # Break the database behind the server's back: every authenticated request now fails unexpectedly.
    _execute(live, "ALTER TABLE api_keys RENAME TO api_keys_moved")
    headers = {"X-Request-Id": "probe-500", "Idempotency-Key": str(uuid.uuid4())}
    broken = operator.http.post("/v1/agent/bots", json={"name": "after"}, headers=headers)
    assert broken.status_code == 500
    assert broken.headers["content-type"] == "application/problem+json"
    assert broken.headers["x-request-id"] == "probe-500"
    body = broken.json()
    assert body["code"] == "internal_error" and body["requestId"] == "probe-500"
    assert "Traceback" not in broken.text and "api_keys" not in broken.text  # nothing of the inside leaks

    # Mended, the same request with the same Idempotency-Key runs: a server error is not kept.
    _execute(live, "ALTER TABLE api_keys_moved RENAME TO api_keys")
    retried = operator.http.post("/v1/agent/bots", json={"name": "after"}, headers=headers)
    assert retried.status_code == 201 and "idempotent-replayed" not in retried.headers

    # Migrations that are not applied make the service not ready (and say so).
    _execute(live, "DELETE FROM alembic_version")
    not_ready = httpx.get(live.base_url + "/readyz")
    assert not_ready.status_code == 503 and not_ready.json()["code"] == "migrations_pending"

    log = live.log_path.read_text()
    assert re.search(r"GET /healthz 200 [0-9.]+ms request_id=probe-1", log)
    assert re.search(r"POST /v1/agent/bots 500 [0-9.]+ms request_id=probe-500", log)
    assert "unhandled error request_id=probe-500" in log and "Traceback" in log
    assert operator.key.removeprefix("svc-") not in log
