"""Webhooks reach public addresses only, over a live server that enforces it (private targets are
not lifted here, unlike the other tests' servers).

Name resolution is scripted through the test deployment's hosts file (bountyboard.events.testdns):
it replaces the server process's resolver, so that a lookup made anywhere in the server, by the
check or by the HTTP client, gets the scripted answer, as from a rebinding DNS server.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.events.conftest import FAST, Hooks, admin_of
from tests.events.helpers import account, attempts, emit, subscribe
from tests.events.receiver import Receiver, Reply
from tests.support.server import LiveServer, backends, database_url

PUBLIC = "93.184.216.34"


@pytest.fixture(scope="module", params=backends())
def strict(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    data_dir = tmp_path_factory.mktemp(f"strict-{request.param}")
    hosts = data_dir / "hosts.json"
    hosts.write_text("{}")
    env: dict[str, str | None] = {**FAST, "BOUNTYBOARD_WEBHOOK_ALLOW_PRIVATE": "false",
                                  "BOUNTYBOARD_WEBHOOK_TIMEOUT_SECONDS": "3", "BOUNTYBOARD_TEST_HOSTS_FILE": str(hosts)}
    with database_url(request.param, data_dir) as url, LiveServer(data_dir, url, env=env) as live:
        yield Hooks(live, admin_of(live))


def _answer(strict: Hooks, names: dict[str, list[str | list[str]]]) -> None:
    """Script the server's DNS: each name's n-th lookup from now on gets its n-th answer."""
    (Path(strict.server.data_dir) / "hosts.json").write_text(json.dumps(names))


@pytest.mark.parametrize("host", [
    "0x7f000001", "2130706433", "127.1", "0", "012.0.0.1", "0x7f.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:a00:1]",
    "[2002:7f00:1::1]", "[64:ff9b::a9fe:a9fe]", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "[::127.0.0.1]",
    "[fd00::1]", "internal.test", "mixed.test", "localhost",
])
def test_private_destinations_are_refused_at_creation(strict: Hooks, host: str) -> None:
    _answer(strict, {"internal.test": ["127.0.0.1"], "mixed.test": [[PUBLIC, "10.0.0.1"]]})
    operator = account(strict.admin)
    response = operator.http.post("/v1/agent/webhooks", json={"url": f"http://{host}:8080/hook",
                                                              "events": ["claim.reviewed"]})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "invalid_webhook_url"
    # Octal forms are not even URLs the HTTP client would send to.
    assert any(why in response.json()["detail"] for why in ("non-public", "loopback name", "not valid"))
    assert operator.http.get("/v1/agent/webhooks").json()["data"] == []

    # Changing a public subscription's URL to a private one is refused the same way.
    _answer(strict, {"public.test": [PUBLIC]})
    hook = subscribe(operator, "http://public.test/hook", ["claim.reviewed"])
    changed = operator.http.patch(f"/v1/agent/webhooks/{hook['id']}", json={"url": f"http://{host}:8080/hook"})
    assert changed.status_code == 422, changed.text
    assert operator.http.get(f"/v1/agent/webhooks/{hook['id']}").json()["url"] == "http://public.test/hook"


def test_a_name_rebound_after_the_check_is_never_contacted(strict: Hooks) -> None:
    # This machine's name: the system resolver answers its real, local address (where the receiver
    # listens, as an internal service would); the scripted resolver answers what the test says. An
    # HTTP client that resolved the name again to connect would reach the receiver.
    name = socket.gethostname()
    operator = account(strict.admin)
    with Receiver(bind="0.0.0.0") as receiver:
        receiver.default = Reply(200, body=b"internal secret")
        _answer(strict, {name: [PUBLIC]})
        hook = subscribe(operator, f"http://{name}:{receiver.port}/hook", ["claim.reviewed"])

        # From now on the name answers the public address once, then loopback.
        _answer(strict, {name: [PUBLIC, "127.0.0.1"]})
        emit(strict.admin, "claim.reviewed", operatorId=operator.id)
        first, second = attempts(operator, hook["id"], 2)

        # The first attempt was checked against the public address and went there (whatever answered).
        assert "resolve" not in (first["error"] or ""), first
        assert first["responseExcerpt"] != "internal secret"
        # The next lookup answers loopback: refused before any connection, for good.
        assert second["status"] == "failed" and second["statusCode"] is None
        assert "resolves to 127.0.0.1, a non-public address" in second["error"]
        endpoint = operator.http.get(f"/v1/agent/webhooks/{hook['id']}").json()
        assert endpoint["enabled"] is False and "non-public" in endpoint["disabledReason"]
        time.sleep(2)  # retries would be due within milliseconds on this schedule
        assert len(attempts(operator, hook["id"], 2)) == 2
        assert receiver.received == []


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_pinned_connections_keep_the_host_name(hooks: Hooks, tmp_path: Path) -> None:
    """Connecting to the vetted address changes nothing the receiver sees: the Host header and the
    TLS server name are the URL's host name (this server allows loopback, where the name resolves)."""
    name = socket.gethostname()
    operator = account(hooks.admin)
    with Receiver(bind="0.0.0.0") as receiver:
        hook = subscribe(operator, f"http://{name}:{receiver.port}/hook", ["claim.reviewed"])
        emit(hooks.admin, "claim.reviewed", operatorId=operator.id)
        (request,) = receiver.wait_for_ids(1)
        assert request.headers["host"] == f"{name}:{receiver.port}"
        request.verified(hook["secret"])

    # TLS: the server name sent is the host name; the self-signed certificate is then refused, as
    # any certificate a public authority did not issue.
    cert, key = _self_signed(tmp_path, name)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server_names: list[str | None] = []
    tls.sni_callback = lambda _sock, server_name, _ctx: server_names.append(server_name)
    with socket.create_server(("0.0.0.0", 0)) as listener:
        port = listener.getsockname()[1]

        def accept_one() -> None:
            connection, _ = listener.accept()
            with contextlib.suppress(OSError), tls.wrap_socket(connection, server_side=True):
                pass
            connection.close()

        thread = threading.Thread(target=accept_one, daemon=True)
        thread.start()
        secure = subscribe(operator, f"https://{name}:{port}/hook", ["claim.reviewed"])
        operator.http.delete(f"/v1/agent/webhooks/{hook['id']}")
        emit(hooks.admin, "claim.reviewed", operatorId=operator.id)
        thread.join(timeout=20)
    assert server_names == [name]
    failed = attempts(operator, secure["id"], 1)[0]
    assert failed["status"] == "failed" and "CERTIFICATE_VERIFY_FAILED" in (failed["error"] or ""), failed
