"""No GET writes: every GET operation of the OpenAPI documents (the agent document and the hub's),
called with valid ids and keys against a seeded database, sends no INSERT, UPDATE or DELETE, and never
asks for SQLite's write lock (``BEGIN IMMEDIATE``). A GET that writes could not be served by a read
replica. Every SQL statement the engine sends while the GET is answered is recorded
(``before_cursor_execute``).

One exclusion, for a stated reason: the last use of an API key (``UPDATE api_keys SET last_used_at``) is
written in a batch shortly after the answer, by a task of its own (``accounts.auth.flush_key_uses``), so
that the key check itself only reads; it may land while a later GET is recorded (its ``BEGIN IMMEDIATE`` on
SQLite, then that one ``UPDATE``).
"""

from __future__ import annotations

import re

import httpx

from tests.benchhub.helpers import payload
from tests.market.support import Market, claim, ok, submit
from tests.support.api import Account, Admin, Bot, client
from tests.support.in_process import recorded_statements

_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|BEGIN\s+IMMEDIATE)\b", re.IGNORECASE)
_KEY_USES = re.compile(r"^\s*UPDATE api_keys SET last_used_at=\S+ WHERE api_keys\.id = \S+\s*$", re.IGNORECASE)
_DOCUMENTS = ("/v1/meta/openapi.json", "/v1/meta/benchhub-openapi.json")



def writes(statements: list[str]) -> list[str]:
    """The writes among ``statements``, but for the key uses' flush (its ``BEGIN IMMEDIATE`` and ``UPDATE``)."""
    found = []
    for index, statement in enumerate(statements):
        following = statements[index + 1] if index + 1 < len(statements) else ""
        flush_begins = statement.strip().upper() == "BEGIN IMMEDIATE" and _KEY_USES.match(following)
        if _KEY_USES.match(statement) or flush_begins:
            continue
        if _WRITE.match(statement):
            found.append(statement)
    return found


def _seed(market: Market, admin: Admin) -> dict[str, tuple[httpx.Client, str, dict[str, str]]]:
    """A database with one of everything the GET routes show; for each route, who calls it and how."""
    publisher, reviewer, operator = market.publisher(funds=60), market.reviewer(), market.account("operator")
    worker: Bot = operator.bot()
    judge = market.operator().bot()

    # A webhook, with a delivery queued by the review below, and events to list.
    hook = operator.http.post("/v1/agent/webhooks", json={"url": "https://93.184.216.34/hook",
                                                          "events": ["claim.reviewed", "appeal.resolved"]})
    assert hook.status_code in (200, 201), hook.text
    hook_id = hook.json()["id"]

    # A claim with a file and a submission, rejected and appealed; a judge task on it.
    work = market.task(publisher, "exchange", bounty=10)
    work_claim = claim(worker, work["id"])
    data = b"%PDF-1.4\n" + b"x" * 200
    slot = worker.http.post(f"/v1/agent/claims/{work_claim}/uploads",
                            json={"fileName": "a.pdf", "mimeType": "application/pdf", "sizeBytes": len(data)})
    assert slot.status_code == 201, slot.text
    put = worker.http.put(slot.json()["uploadUrl"], content=data, headers=slot.json()["headers"])
    assert put.status_code == 200, put.text
    file_key = put.json()["fileKey"]
    submit(worker, work_claim, {"resultType": "document", "content": "https://files.example.com/a.pdf",
                                "attachments": [{"type": "document", "fileKey": file_key}]})
    rubric = {"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 10}}}
    judged = market.task(publisher, "judge", bounty=8, targetClaimId=work_claim, rubric=rubric)
    claim(judge, judged["id"])
    ok(reviewer.http.post(f"/v1/review/claims/{work_claim}", json={"decision": "reject", "comment": "no"}))
    ok(worker.http.post(f"/v1/agent/claims/{work_claim}/appeal", json={"reason": "Please look again."}))

    # A claim whose TTL has passed and that nothing has expired yet: showing it must not store that.
    lapsing = market.task(publisher, "fun", bounty=5)
    lapsing_claim = claim(worker, lapsing["id"])
    admin.advance_clock(10 * 24 * 3600)

    # Two runs of two models on one benchmark.
    runs = [ok(operator.http.post("/v1/runs", json=payload("gsm8k", model, [1.0, 0.0, 1.0])))
            for model in ("model-a", "model-b")]

    link = ok(worker.http.get(f"/v1/files/{file_key}/link"))  # after the clock moved: a link still valid
    content = httpx.URL(link["downloadUrl"])
    anonymous = client(admin.base_url)
    return {
        "/v1/agent/tasks": (worker.http, "/v1/agent/tasks", {}),
        "/v1/agent/tasks/{id}": (worker.http, f"/v1/agent/tasks/{work['id']}", {}),
        "/v1/agent/claims": (worker.http, "/v1/agent/claims", {}),
        "/v1/agent/claims/{id}/status": (worker.http, f"/v1/agent/claims/{lapsing_claim}/status", {}),
        "/v1/judge/tasks/{id}/target": (judge.http, f"/v1/judge/tasks/{judged['id']}/target", {}),
        "/v1/leaderboard": (worker.http, "/v1/leaderboard", {}),
        "/v1/bots/{id}/reputation": (publisher.http, f"/v1/bots/{worker.id}/reputation", {}),
        "/v1/operators/{id}/reputation": (publisher.http, f"/v1/operators/{operator.user['id']}/reputation", {}),
        "/v1/publishers/{id}/decisions": (operator.http, f"/v1/publishers/{publisher.user['id']}/decisions", {}),
        "/api/auth/me": (operator.http, "/api/auth/me", {}),
        "/v1/agent/me": (worker.http, "/v1/agent/me", {}),
        "/v1/agent/bots": (operator.http, "/v1/agent/bots", {}),
        "/v1/profile": (operator.http, "/v1/profile", {}),
        "/v1/profile/api-keys": (operator.http, "/v1/profile/api-keys", {}),
        "/v1/tasks": (publisher.http, "/v1/tasks", {}),
        "/v1/tasks/{id}": (publisher.http, f"/v1/tasks/{work['id']}", {}),
        "/v1/tasks/{id}/claims": (publisher.http, f"/v1/tasks/{work['id']}/claims", {}),
        "/v1/review/queue": (reviewer.http, "/v1/review/queue", {}),
        "/v1/appeals": (reviewer.http, "/v1/appeals", {}),
        "/v1/files/{fileKey}/link": (worker.http, f"/v1/files/{file_key}/link", {}),
        "/v1/files/{fileKey}/content": (anonymous, content.path, dict(content.params)),
        "/v1/profile/balance": (publisher.http, "/v1/profile/balance", {}),
        "/v1/admin/ledger/check": (admin.http, "/v1/admin/ledger/check", {}),
        "/v1/agent/events": (operator.http, "/v1/agent/events", {}),
        "/v1/agent/webhooks": (operator.http, "/v1/agent/webhooks", {}),
        "/v1/agent/webhooks/{id}": (operator.http, f"/v1/agent/webhooks/{hook_id}", {}),
        "/v1/agent/webhooks/{id}/deliveries": (operator.http, f"/v1/agent/webhooks/{hook_id}/deliveries", {}),
        **{path: (anonymous, path, {}) for path in (
            "/v1/meta/openapi.json", "/v1/meta/benchhub-openapi.json", "/v1/meta/agent-manifest",
            "/v1/meta/skill.md", "/v1/meta/postman.json", "/v1/meta/mcp-server.json", "/v1/meta/examples/python",
            "/v1/meta/examples/typescript", "/benchhub/index.json", "/v1/bench/benchmarks", "/v1/bench/runs")},
        "/v1/bench/benchmarks/{slug}": (anonymous, "/v1/bench/benchmarks/gsm8k", {}),
        "/v1/bench/benchmarks/{slug}/leaderboard": (anonymous, "/v1/bench/benchmarks/gsm8k/leaderboard", {}),
        "/v1/bench/benchmarks/{slug}/compare": (anonymous, "/v1/bench/benchmarks/gsm8k/compare",
                                                {"a": "model-a", "b": "model-b"}),
        "/v1/bench/runs/{id}": (anonymous, f"/v1/bench/runs/{runs[0]['run']['id']}", {}),
        "/v1/bench/reproduced": (anonymous, "/v1/bench/reproduced", {"model": "model-a"}),
    }


def _get_paths(admin: Admin) -> set[str]:
    paths = set()
    for document in _DOCUMENTS:
        for path, item in ok(admin.http.get(document))["paths"].items():
            if "get" in item:
                paths.add(path)
    return paths


def test_no_get_route_writes(market: Market, app_admin: Admin) -> None:
    calls = _seed(market, app_admin)
    assert set(calls) == _get_paths(app_admin), "every GET route of the documents is called, and only those"
    found: dict[str, list[str]] = {}
    read = 0
    for path, (http, url, params) in sorted(calls.items()):
        with recorded_statements() as statements:
            response = http.get(url, params=params)
        assert response.status_code == 200, f"{path}: {response.status_code} {response.text[:300]}"
        read += len(statements)
        if writes(statements):
            found[path] = writes(statements)
    assert read > len(calls), "the recorder saw the reads"  # (answers cached by state stamps read nothing)
    assert not found, found


def test_a_lapsed_claim_reads_as_expired_and_stays_stored_active(market: Market, app_admin: Admin) -> None:
    """What the deadline decided is shown at once; only a write flow or the sweep stores it."""
    publisher: Account = market.publisher(funds=10)
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=5)
    held = claim(bot, task["id"])
    app_admin.advance_clock(10 * 24 * 3600)
    with recorded_statements() as statements:
        shown = ok(bot.http.get(f"/v1/agent/claims/{held}/status"))
    assert shown["status"] == "expired" and shown["expiresAt"] is None and shown["nextAction"] == "done"
    assert not writes(statements)
    refused = bot.http.post(f"/v1/agent/claims/{held}/heartbeat")  # a write flow stores it, then refuses
    assert refused.status_code == 409 and refused.json()["code"] == "claim_expired", refused.text
    assert ok(publisher.http.get(f"/v1/tasks/{task['id']}"))["status"] == "published"
