"""Every invalid transition answers 409 with the current state and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, status, submit, task_of
from tests.support.api import Account

pytestmark = pytest.mark.in_process


def _snapshot(market: Market, publisher: Account, task_id: str, *others: Account) -> tuple[Any, ...]:
    task = task_of(publisher, task_id)
    claims = ok(publisher.http.get(f"/v1/tasks/{task_id}/claims"))["data"]
    return (task["status"], task["currentClaims"], task["bountyAmount"],
            [(c["id"], c["status"], c["reviewState"], c["submissionId"]) for c in claims],
            market.balance(publisher), *(market.balance(other) for other in others))


def test_task_transitions_refused(market: Market) -> None:
    publisher = market.publisher(funds=20)
    task = market.task(publisher, "fun", bounty=10)
    before = _snapshot(market, publisher, task["id"])
    body = expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/publish"), 409, "invalid_transition")
    assert body["currentStatus"] == "published"
    body = expect_problem(publisher.http.patch(f"/v1/tasks/{task['id']}", json={"title": "new"}),
                          409, "invalid_transition")
    assert body["currentStatus"] == "published"
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/close"), 409, "not_arena")
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/fund", json={"amount": 1}), 409, "not_donate")
    assert _snapshot(market, publisher, task["id"]) == before

    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    after_cancel = _snapshot(market, publisher, task["id"])
    assert after_cancel[0] == "cancelled" and after_cancel[4] == 20
    for action in ("publish", "cancel"):
        body = expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/{action}"), 409, "invalid_transition")
        assert body["currentStatus"] == "cancelled"
    bot = market.operator().bot()
    body = expect_problem(bot.http.post(f"/v1/agent/tasks/{task['id']}/claim"), 409, "invalid_transition")
    assert body["currentStatus"] == "cancelled"
    assert _snapshot(market, publisher, task["id"]) == after_cancel


def test_arena_close_twice_and_fund_closed(market: Market) -> None:
    publisher = market.publisher(funds=10)
    task = market.task(publisher, "arena", bounty=10)
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))  # no winner: the bounty is refunded
    assert market.balance(publisher) == 10
    before = _snapshot(market, publisher, task["id"])
    body = expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/close"), 409, "invalid_transition")
    assert body["currentStatus"] == "completed"
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"), 409, "invalid_transition")
    assert _snapshot(market, publisher, task["id"]) == before


def test_publish_without_funds_is_refused_and_stays_draft(market: Market) -> None:
    publisher = market.publisher(funds=5)
    draft = market.draft(publisher, "fun", bounty=5.01)
    body = expect_problem(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"), 402, "insufficient_funds")
    assert body["balance"] == 5 and body["required"] == 5.01
    assert task_of(publisher, draft["id"])["status"] == "draft" and market.balance(publisher) == 5
    ok(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"bountyAmount": 5}))
    assert ok(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"))["escrowAmount"] == 5
    assert market.balance(publisher) == 0


def test_claim_transitions_refused(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=10), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=10)
    other = market.task(market.publisher(), "fun", bounty=0)

    expect_problem(publisher.http.post(f"/v1/agent/tasks/{task['id']}/claim"), 409, "own_task")
    claim_id = claim(bot, task["id"])
    before = _snapshot(market, publisher, task["id"], bot.operator)
    expect_problem(bot.http.post(f"/v1/agent/tasks/{task['id']}/claim"), 409, "no_slot_free")
    body = expect_problem(bot.http.post(f"/v1/agent/tasks/{other['id']}/claim"), 409, "active_claim_limit")
    assert body["limit"] == 1
    body = expect_problem(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}),
                          409, "invalid_transition")
    assert body["currentStatus"] == "active" and body["reviewState"] == "not_submitted"
    expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "x"}),
                   409, "invalid_transition")
    assert _snapshot(market, publisher, task["id"], bot.operator) == before

    receipt = submit(bot, claim_id, GOOD_CONTENT["fun"])
    before = _snapshot(market, publisher, task["id"], bot.operator)
    for action in ("release", "heartbeat"):
        body = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/{action}"), 409, "invalid_transition")
        assert body["currentStatus"] == "submitted"
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"), 409, "reviews_pending")
    # The same body again is the same receipt; another body is refused.
    assert submit(bot, claim_id, GOOD_CONTENT["fun"]) == receipt
    body = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={
        "resultType": "text", "content": "something else"}), 409, "already_submitted")
    assert body["submissionId"] == receipt["submissionId"]
    assert _snapshot(market, publisher, task["id"], bot.operator) == before

    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}))
    before = _snapshot(market, publisher, task["id"], bot.operator)
    body = expect_problem(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "reject"}),
                          409, "invalid_transition")
    assert body["currentStatus"] == "accepted"
    expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "x"}),
                   409, "invalid_transition")
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"), 409, "invalid_transition")
    assert _snapshot(market, publisher, task["id"], bot.operator) == before


def test_release_frees_the_slot_and_cannot_be_repeated(market: Market) -> None:
    publisher = market.publisher(funds=3)
    first, second = market.operator().bot(), market.operator().bot()
    task = market.task(publisher, "fun", bounty=3)
    claim_id = claim(first, task["id"])
    released = ok(first.http.post(f"/v1/agent/claims/{claim_id}/release"))
    assert released["status"] == "released" and released["nextAction"] == "done"
    assert task_of(publisher, task["id"])["status"] == "published"
    before = _snapshot(market, publisher, task["id"])
    body = expect_problem(first.http.post(f"/v1/agent/claims/{claim_id}/submit", json=GOOD_CONTENT["fun"]),
                          409, "invalid_transition")
    assert body["currentStatus"] == "released"
    expect_problem(first.http.post(f"/v1/agent/claims/{claim_id}/release"), 409, "invalid_transition")
    assert _snapshot(market, publisher, task["id"]) == before
    claim(second, task["id"])


def test_appeal_and_resolution_transitions(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=4), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=4)
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "reject", "comment": "off topic"}))
    appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "it is on topic"}))
    before = _snapshot(market, publisher, task["id"], bot.operator)
    body = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "again"}),
                          409, "invalid_transition")
    assert body["reviewState"] == "appealed"
    assert _snapshot(market, publisher, task["id"], bot.operator) == before

    judge = market.reviewer()  # not the reviewer who rejected
    ok(judge.http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "denied", "comment": "no"}))
    after = _snapshot(market, publisher, task["id"], bot.operator)
    assert after[0] == "published" and after[1] == 0  # the denied claim gave its slot back
    body = expect_problem(judge.http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "upheld"}),
                          409, "invalid_transition")
    assert body["currentStatus"] == "resolved"
    assert status(bot, claim_id)["nextAction"] == "done"
    assert _snapshot(market, publisher, task["id"], bot.operator) == after
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    assert market.balance(publisher) == 4


def test_callers_without_the_role_or_scope_are_refused(market: Market) -> None:
    publisher, operator = market.publisher(funds=1), market.operator()
    bot = operator.bot()
    expect_problem(operator.http.post("/v1/tasks", json={"module": "fun", "title": "x"}), 403, "insufficient_scope")
    expect_problem(bot.http.get("/v1/review/queue"), 403, "insufficient_scope")
    expect_problem(publisher.http.get("/v1/review/queue"), 403, "insufficient_scope")
    narrow = operator.bot(scopes=["tasks:read"])
    task = market.task(publisher, "fun", bounty=1)
    expect_problem(narrow.http.post(f"/v1/agent/tasks/{task['id']}/claim"), 403, "insufficient_scope")
    assert task_of(publisher, task["id"])["currentClaims"] == 0
    expect_problem(bot.http.get(f"/v1/tasks/{task['id']}"), 403, "insufficient_scope")
    other = market.publisher()
    expect_problem(other.http.post(f"/v1/tasks/{task['id']}/cancel"), 404, "not_found")
    # Only the holder acts on a claim: its operator reads it but submits with the bot's key.
    claim_id = claim(bot, task["id"])
    assert status(operator, claim_id)["status"] == "active"
    expect_problem(operator.http.post(f"/v1/agent/claims/{claim_id}/submit", json=GOOD_CONTENT["fun"]),
                   403, "not_claim_holder")
    expect_problem(market.operator().http.get(f"/v1/agent/claims/{claim_id}/status"), 404, "not_found")
    assert status(bot, claim_id)["submissionId"] is None
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    assert status(bot, claim_id)["status"] == "expired"
