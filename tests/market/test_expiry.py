"""Time-driven transitions on a private server whose clock the test moves: claim TTLs, heartbeats,
appeal windows and task deadlines, applied by the periodic sweep."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from tests.market.support import GOOD_CONTENT, Market, claim, eventually, ok, private_market, status, submit, task_of
from tests.support.server import backends

APPEAL_WINDOW = 600


@pytest.fixture(scope="module", params=backends())
def clocked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Market]:
    env: dict[str, str | None] = {"BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "0.2",
                                  "BOUNTYBOARD_APPEAL_WINDOW_SECONDS": str(APPEAL_WINDOW)}
    with private_market(request.param, tmp_path_factory.mktemp(f"clocked-{request.param}"), env) as (_, market):
        yield market


@pytest.fixture(autouse=True)
def ledger_balanced(clocked: Market) -> Iterator[None]:
    """This module's ledger is the private server's (replaces the shared server's check)."""
    yield
    assert clocked.ledger_check()["balanced"]


def _server_now(market: Market) -> datetime:
    """The server's clock (moved by earlier tests of this module), read by nudging it a millisecond."""
    moved = ok(market.admin.http.post("/v1/admin/clock", json={"seconds": 0.001}))
    return datetime.fromisoformat(moved["now"].replace("Z", "+00:00"))


def test_claim_ttl_expiry_frees_the_slot_and_heartbeat_extends(clocked: Market) -> None:
    market = clocked
    publisher = market.publisher(funds=5)
    slow, steady, next_bot = market.operator().bot(), market.operator().bot(), market.operator().bot()
    task = market.task(publisher, "arena", bounty=5, maxClaims=2, claimTtlSeconds=120, payoutSplit=[1])
    slow_claim, steady_claim = claim(slow, task["id"]), claim(steady, task["id"])
    market.admin.advance_clock(90)
    ok(steady.http.post(f"/v1/agent/claims/{steady_claim}/heartbeat"))
    market.admin.advance_clock(40)  # slow's TTL (120 s) has run out; steady's was renewed at 90 s
    eventually(lambda: status(slow, slow_claim)["status"], "expired")
    assert status(slow, slow_claim)["nextAction"] == "done"
    assert status(steady, steady_claim)["status"] == "active"
    # The claim reads as expired at once (computed on read); the slot is given back by the sweep.
    eventually(lambda: task_of(publisher, task["id"])["currentClaims"], 1)
    expired = slow.http.post(f"/v1/agent/claims/{slow_claim}/submit", json=GOOD_CONTENT["arena"])
    assert expired.status_code == 409 and expired.json()["currentStatus"] == "expired"
    claim(next_bot, task["id"])  # the freed slot can be taken again
    events = ok(slow.http.get("/v1/agent/events", params={"types": "claim.expired"}))["data"]
    assert [e["data"]["claimId"] for e in events] == [slow_claim]


def test_appeal_window_closing_frees_the_slot(clocked: Market) -> None:
    market = clocked
    publisher, reviewer = market.publisher(funds=2), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=2)
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "reject"}))
    assert task_of(publisher, task["id"])["status"] == "in_progress"
    market.admin.advance_clock(APPEAL_WINDOW + 1)
    eventually(lambda: task_of(publisher, task["id"])["status"], "published")
    current = status(bot, claim_id)
    assert current["status"] == "rejected" and current["nextAction"] == "done"
    late = bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "late"})
    assert late.status_code == 409 and late.json()["code"] == "appeal_window_closed"


def test_deadline_expires_the_task_and_refunds(clocked: Market) -> None:
    market = clocked
    publisher = market.publisher(funds=9)
    bot = market.operator().bot()
    deadline = (_server_now(market) + timedelta(hours=1)).isoformat()
    task = market.task(publisher, "fun", bounty=9, deadline=deadline)
    claim_id = claim(bot, task["id"])
    assert market.balance(publisher) == 0
    market.admin.advance_clock(2 * 3600)
    eventually(lambda: task_of(publisher, task["id"])["status"], "expired")
    assert market.balance(publisher) == 9
    assert status(bot, claim_id)["status"] == "expired"
    assert task_of(publisher, task["id"])["escrowStatus"] == "refunded"


def test_arena_deadline_with_winners_closes_and_pays(clocked: Market) -> None:
    market = clocked
    publisher, reviewer = market.publisher(funds=6), market.reviewer()
    bot = market.operator().bot()
    deadline = (_server_now(market) + timedelta(days=1)).isoformat()
    task = market.task(publisher, "arena", bounty=6, deadline=deadline, payoutSplit=[1])
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["arena"])
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept", "score": 3}))
    market.admin.advance_clock(2 * 86400)
    eventually(lambda: task_of(publisher, task["id"])["status"], "completed")
    assert market.balance(bot.operator) == 6 and market.balance(publisher) == 0

