"""The SDK transport: idempotency keys, retries with backoff, Retry-After, problem errors.

The live service cannot be made to answer 503 or 429 on demand, so these tests put a scripted
HTTP server on loopback in front of the transport (a real socket and real HTTP, scripted answers).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from bountyboard.client.transport import MAX_RETRY_AFTER_SECONDS, ApiError, Transport
from tests.support.server import free_port

pytestmark = pytest.mark.in_process

Answer = tuple[int, dict[str, str], dict[str, object]]


class Scripted:
    """Answers requests from a script, and records what arrived."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                scripted.requests.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
                status, headers, body = scripted.answers.pop(0) if scripted.answers else (200, {}, {"ok": True})
                payload = json.dumps(body).encode()
                self.send_response(status)
                media = "application/problem+json" if status >= 400 else "application/json"
                self.send_header("content-type", media)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # A short poll, so that shutdown() returns at once rather than after up to half a second.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def scripted() -> Iterator[Scripted]:
    server = Scripted([])
    yield server
    server.close()


def _transport(url: str, waits: list[float], **options: float) -> Transport:
    return Transport(url, "svc-test", backoff_base=0.01, sleep=waits.append, **options)


def test_post_retries_with_one_idempotency_key_and_honours_retry_after(scripted: Scripted) -> None:
    scripted.answers += [(503, {"Retry-After": "1"}, {"code": "unavailable"}),
                         (429, {"Retry-After": "2"}, {"code": "rate_limited"}),
                         (200, {}, {"claimId": "clm_1"})]
    waits: list[float] = []
    with _transport(scripted.url, waits) as transport:
        answer = transport.request("POST", "/v1/agent/tasks/t/claim", json={"a": 1})
    assert answer.json() == {"claimId": "clm_1"}
    keys = [headers["Idempotency-Key"] for _, _, headers, _ in scripted.requests]
    assert len(keys) == 3 and len(set(keys)) == 1 and len(keys[0]) == 36
    assert all(body == b'{"a":1}' for *_, body in scripted.requests)
    assert all(headers["Authorization"] == "Bearer svc-test" for _, _, headers, _ in scripted.requests)
    assert waits[0] >= 1 and waits[1] >= 2


def test_given_idempotency_key_is_sent_and_gets_carry_none(scripted: Scripted) -> None:
    with _transport(scripted.url, []) as transport:
        transport.request("POST", "/x", idempotency_key="my-key")
        transport.request("GET", "/y", params={"page": 2, "module": None})
    (_, _, post_headers, _), (_, get_path, get_headers, _) = scripted.requests
    assert post_headers["Idempotency-Key"] == "my-key"
    assert "Idempotency-Key" not in get_headers
    assert get_path == "/y?page=2"


def test_raw_bytes_go_out_as_octet_stream_with_the_key_on_every_retry(scripted: Scripted) -> None:
    scripted.answers += [(503, {}, {"code": "unavailable"}), (200, {}, {"archiveKey": "vfa_1"})]
    with _transport(scripted.url, []) as transport:
        answer = transport.request("PUT", "/v1/tasks/t/verifier-archive", content=b"\x1f\x8b raw")
    assert answer.json() == {"archiveKey": "vfa_1"}
    assert [(method, body) for method, _, _, body in scripted.requests] == [("PUT", b"\x1f\x8b raw")] * 2
    for _, _, headers, _ in scripted.requests:
        assert headers["Content-Type"] == "application/octet-stream" and headers["Authorization"] == "Bearer svc-test"
        assert "Idempotency-Key" not in headers


def test_a_request_in_flight_elsewhere_is_waited_out(scripted: Scripted) -> None:
    scripted.answers += [(409, {}, {"code": "idempotency_key_in_use"}), (200, {}, {"ok": 1})]
    waits: list[float] = []
    with _transport(scripted.url, waits) as transport:
        assert transport.request("POST", "/x").json() == {"ok": 1}
    assert len(waits) == 1


def test_client_errors_are_not_retried_and_carry_the_problem(scripted: Scripted) -> None:
    problem = {"type": "https://bountyboard.dev/problems/insufficient_scope", "status": 403,
               "code": "insufficient_scope", "detail": "needs tasks:claim", "requiredScopes": ["tasks:claim"]}
    scripted.answers.append((403, {}, problem))
    waits: list[float] = []
    with _transport(scripted.url, waits) as transport, pytest.raises(ApiError) as raised:
        transport.request("POST", "/x")
    assert len(scripted.requests) == 1 and waits == []
    error = raised.value
    assert (error.status, error.code, error.detail) == (403, "insufficient_scope", "needs tasks:claim")
    assert error.required_scopes == ["tasks:claim"] and error.problem == problem


def test_retries_stop_after_max_retries(scripted: Scripted) -> None:
    scripted.answers += [(500, {}, {"code": "internal_error", "detail": "boom"})] * 3
    waits: list[float] = []
    with _transport(scripted.url, waits, max_retries=2) as transport, pytest.raises(ApiError) as raised:
        transport.request("GET", "/x")
    assert raised.value.status == 500 and len(scripted.requests) == 3 and len(waits) == 2


def test_retry_after_as_an_http_date_and_its_cap(scripted: Scripted) -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    scripted.answers += [(503, {"Retry-After": soon}, {}), (429, {"Retry-After": "86400"}, {})]
    waits: list[float] = []
    with _transport(scripted.url, waits) as transport:
        transport.request("GET", "/x")
    assert 25 <= waits[0] <= 31
    assert waits[1] == MAX_RETRY_AFTER_SECONDS


def test_connection_errors_are_retried_then_raised() -> None:
    waits: list[float] = []
    with _transport(f"http://127.0.0.1:{free_port()}", waits, max_retries=3) as transport, \
            pytest.raises(httpx.ConnectError):
        transport.request("POST", "/x")
    assert len(waits) == 3
    # Exponential backoff with full jitter: each wait is below base * 2**attempt.
    assert all(0 <= wait <= 0.01 * 2 ** attempt for attempt, wait in enumerate(waits))
