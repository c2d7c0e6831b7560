"""``Idempotency-Key`` on POST (DESIGN.md section 4): replay, in flight, mismatch."""

from __future__ import annotations

import threading
import time
import uuid

import httpx
import pytest

from tests.support.api import Admin, client
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

REPLAYED = "idempotent-replayed"


def _key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def test_a_retry_gets_the_first_answer_again(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    headers = _key()
    first = operator.http.post("/v1/agent/bots", json={"name": "once"}, headers=headers)
    assert first.status_code == 201, first.text
    assert REPLAYED not in first.headers
    again = operator.http.post("/v1/agent/bots", json={"name": "once"}, headers=headers)
    assert again.status_code == 201, again.text
    assert again.headers[REPLAYED] == "true"
    assert again.json() == first.json()
    assert again.headers["content-type"] == first.headers["content-type"]
    assert again.headers["x-request-id"] != first.headers["x-request-id"]  # a new request, the same answer
    assert [bot["name"] for bot in operator.http.get("/v1/agent/bots").json()["data"]] == ["once"]

    # Without the header the same body is a new request (here: a conflict on the name).
    plain = operator.http.post("/v1/agent/bots", json={"name": "once"})
    assert plain.status_code == 409 and REPLAYED not in plain.headers


def test_error_answers_are_replayed_too_but_not_refusals(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    headers = _key()
    invalid = operator.http.post("/v1/agent/bots", json={"name": ""}, headers=headers)
    assert invalid.status_code == 422
    replay = operator.http.post("/v1/agent/bots", json={"name": ""}, headers=headers)
    assert replay.status_code == 422 and replay.headers[REPLAYED] == "true"

    # A refusal (403) did not reach the operation: it is not kept, so it is never replayed.
    narrow = operator.new_key(["profile:read"])
    headers = _key()
    with client(server.base_url, narrow) as http:
        for _ in range(2):
            refused = http.post("/v1/agent/bots", json={"name": "late"}, headers=headers)
            assert refused.status_code == 403 and REPLAYED not in refused.headers


def test_another_body_with_the_same_key_is_a_mismatch(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    headers = _key()
    assert operator.http.post("/v1/agent/bots", json={"name": "first"}, headers=headers).status_code == 201
    other = operator.http.post("/v1/agent/bots", json={"name": "second"}, headers=headers)
    assert other.status_code == 422, other.text
    assert other.headers["content-type"] == "application/problem+json"
    assert other.json()["code"] == "idempotency_key_mismatch"
    assert [bot["name"] for bot in operator.http.get("/v1/agent/bots").json()["data"]] == ["first"]


def test_the_key_is_scoped_to_credential_and_path(server: LiveServer, admin: Admin) -> None:
    a, b = admin.account("operator"), admin.account("operator")
    headers = _key()
    made_by_a = a.http.post("/v1/agent/bots", json={"name": "same"}, headers=headers)
    made_by_b = b.http.post("/v1/agent/bots", json={"name": "same"}, headers=headers)
    assert made_by_a.status_code == made_by_b.status_code == 201
    assert REPLAYED not in made_by_b.headers and made_by_b.json()["id"] != made_by_a.json()["id"]
    key_for_bot = a.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["profile:read"]},
                              headers=headers)
    assert key_for_bot.status_code == 200 and REPLAYED not in key_for_bot.headers


def test_a_request_still_in_flight_answers_409(server: LiveServer, admin: Admin) -> None:
    # POST /v1/admin/test/hold answers after a delay (test deployments only): two identical requests
    # overlap for sure, whichever of them reaches the server first.
    headers = _key()
    body = {"seconds": 3}
    answers: list[httpx.Response] = []

    def call() -> None:
        with client(server.base_url, admin.key) as http:
            answers.append(http.post("/v1/admin/test/hold", json=body, headers=headers))

    threads = [threading.Thread(target=call) for _ in range(2)]
    threads[0].start()
    time.sleep(0.3)
    threads[1].start()
    for thread in threads:
        thread.join(timeout=30)
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200, 409], [answer.text for answer in answers]
    busy = next(answer for answer in answers if answer.status_code == 409)
    assert busy.json()["code"] == "idempotency_key_in_use"
    assert busy.headers["content-type"] == "application/problem+json"
    # Once the first has finished, the same request is a replay.
    replay = admin.http.post("/v1/admin/test/hold", json=body, headers=headers)
    assert replay.status_code == 200 and replay.headers[REPLAYED] == "true"
    # Another body under the same key is a mismatch.
    assert admin.http.post("/v1/admin/test/hold", json={"seconds": 1}, headers=headers).status_code == 422


def test_a_revoked_key_gets_no_replay(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    created = operator.http.post("/v1/profile/api-keys", json={"kind": "user", "scopes": ["agent:manage"]})
    key = created.json()["key"]
    headers = _key()
    with client(server.base_url, key) as http:
        assert http.post("/v1/agent/bots", json={"name": "r"}, headers=headers).status_code == 201
        assert operator.http.delete(f"/v1/profile/api-keys/{created.json()['id']}").status_code == 200
        replay = http.post("/v1/agent/bots", json={"name": "r"}, headers=headers)
    assert replay.status_code == 401, replay.text
    assert REPLAYED not in replay.headers and replay.headers["www-authenticate"].startswith("Bearer ")


def test_a_bad_idempotency_key_is_refused(server: LiveServer, admin: Admin) -> None:
    operator = admin.account("operator")
    for value in ("x" * 300, "tab\there"):
        response = operator.http.post("/v1/agent/bots", json={"name": "k"}, headers={"Idempotency-Key": value})
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "invalid_idempotency_key"
    assert operator.http.get("/v1/agent/bots").json()["data"] == []


def test_an_answer_after_a_read_is_kept_without_waiting(server: LiveServer, admin: Admin) -> None:
    # The operation reads (is this bot mine?) and refuses with 404 while its transaction is still
    # open; keeping the answer must not wait for that transaction (on SQLite it holds the write lock).
    operator = admin.account("operator")
    headers = _key()
    body = {"kind": "bot", "botId": "bot_01jd2k3m4n5p6q7r8s9t0v1w2x", "scopes": ["tasks:read"]}
    started = time.monotonic()
    first = operator.http.post("/v1/profile/api-keys", json=body, headers=headers)
    again = operator.http.post("/v1/profile/api-keys", json=body, headers=headers)
    assert time.monotonic() - started < 10
    assert first.status_code == again.status_code == 404
    assert again.headers[REPLAYED] == "true" and again.json() == first.json()


def test_the_scope_is_the_key_not_the_spelling_of_its_header(server: LiveServer, admin: Admin) -> None:
    # One key, spelled four ways the authentication accepts: the same credential, so one key is made
    # and the three others replay its answer.
    operator = admin.account("operator")
    headers = _key()
    body = {"kind": "user", "scopes": ["profile:read"], "name": "made once"}
    spellings = [f"Bearer {operator.key}", f"bearer {operator.key}", f"BEARER {operator.key}",
                 f"Bearer  {operator.key}"]
    answers = [httpx.post(server.base_url + "/v1/profile/api-keys", json=body, timeout=30,
                          headers={**headers, "Authorization": spelling}) for spelling in spellings]
    assert [answer.status_code for answer in answers] == [200] * 4, [answer.text for answer in answers]
    assert [answer.headers.get(REPLAYED) for answer in answers] == [None, "true", "true", "true"]
    assert {answer.json()["id"] for answer in answers} == {answers[0].json()["id"]}
    keys = operator.http.get("/v1/profile/api-keys").json()["data"]
    assert [key["name"] for key in keys].count("made once") == 1, keys
