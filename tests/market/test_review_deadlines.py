"""Review deadlines and independent appeals (DESIGN.md section 14) on two replicas sharing one database,
each running the sweep, with the test clock: a submission left unreviewed is accepted and paid once,
or escalated to the admins; an appeal is resolved by another reviewer or, past its window, an admin."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest

from tests.events.helpers import subscribe
from tests.events.receiver import Receiver
from tests.market.support import GOOD_CONTENT, Market, claim, eventually, expect_problem, ok, status, submit, task_of
from tests.support.api import ALL_SCOPES, Admin
from tests.support.server import ADMIN_EMAIL, LiveServer, backends, database_url

WARNING = 600  # review.due this long before the deadline
APPEAL_RESOLVE_WINDOW = 3600


@pytest.fixture(scope="module", params=backends())
def replicas(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Market]]:
    """Two server processes on one database (one SQLite file, or one PostgreSQL database), both sweeping."""
    data_dir = tmp_path_factory.mktemp(f"deadlines-{request.param}")
    env: dict[str, str | None] = {
        "BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "0.1", "BOUNTYBOARD_SECRET_KEY": f"deadlines-{uuid.uuid4().hex}",
        "BOUNTYBOARD_REVIEW_DUE_WARNING_SECONDS": str(WARNING),
        "BOUNTYBOARD_APPEAL_RESOLVE_WINDOW_SECONDS": str(APPEAL_RESOLVE_WINDOW),
        "BOUNTYBOARD_WEBHOOK_TIME_SCALE": "0.001", "BOUNTYBOARD_WEBHOOK_POLL_INTERVAL_SECONDS": "0.05",
    }
    with database_url(request.param, data_dir) as url, LiveServer(data_dir / "a", url, env=env) as first, \
            LiveServer(data_dir / "b", url, env=env) as second:
        key = first.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        yield [Market(Admin(first.base_url, key)), Market(Admin(second.base_url, key))]


@pytest.fixture(autouse=True)
def ledger_balanced(replicas: list[Market]) -> Iterator[None]:
    """This module's ledger is the replicas' database (replaces the shared server's check)."""
    yield
    assert replicas[0].ledger_check()["balanced"]


def _advance(replicas: list[Market], seconds: float) -> None:
    for market in replicas:  # each process keeps its own clock
        market.admin.advance_clock(seconds)


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _events(account: object, kind: str) -> list[dict[str, object]]:
    return list(ok(account.http.get("/v1/agent/events", params={"types": kind, "limit": 100}))["data"])  # type: ignore[attr-defined]


def test_unreviewed_submissions_are_accepted_and_paid_once_at_the_deadline(replicas: list[Market]) -> None:
    market = replicas[0]
    publisher, operator = market.publisher(funds=24), market.operator()
    bots = [operator.bot() for _ in range(6)]
    with Receiver() as to_publisher:
        hook = subscribe(publisher, to_publisher.url, ["claim.submitted", "review.due"])
        tasks = [market.task(publisher, "fun", bounty=4, reviewWithinHours=2) for _ in bots]
        assert {t["reviewWithinHours"] for t in tasks} == {2} and {t["onReviewTimeout"] for t in tasks} == {"accept"}
        claims = [claim(bot, task["id"]) for bot, task in zip(bots, tasks, strict=True)]
        receipts = [submit(bot, c, GOOD_CONTENT["fun"]) for bot, c in zip(bots, claims, strict=True)]
        seen = status(bots[0], claims[0])
        assert _at(seen["reviewDueAt"]) == _at(receipts[0]["submittedAt"]) + timedelta(hours=2)
        assert seen["payout"] == {"stage": "due", "at": seen["reviewDueAt"]} and seen["decidedBy"] is None
        # The publisher's webhook hears of each submission, signed (verified with standardwebhooks).
        submitted = [r.verified(hook["secret"]) for r in to_publisher.wait_for_ids(len(claims))]
        assert {p["data"]["claimId"] for p in submitted if p["type"] == "claim.submitted"} == set(claims)

        _advance(replicas, 2 * 3600 - WARNING + 5)  # past the warning point, before the deadline
        to_publisher.wait_for_ids(2 * len(claims))
        assert status(bots[0], claims[0])["status"] == "submitted"
        _advance(replicas, WARNING)  # past the deadline
        for bot, claim_id in zip(bots, claims, strict=True):
            eventually(lambda b=bot, c=claim_id: status(b, c)["status"], "accepted")
        time.sleep(1)  # several more sweeps of both replicas
        # Delivery is at least once, a repeat keeping its webhook-id: advancing one process's clock before the
        # other's puts them further apart than a lease, so a row whose success is not yet recorded may be sent
        # again. Each event is counted once by its id, as a receiver does.
        by_id = {r.id: r.verified(hook["secret"]) for r in to_publisher.received}
        due = [p for p in by_id.values() if p["type"] == "review.due"]
    assert sorted(p["data"]["claimId"] for p in due) == sorted(claims)  # once each, though two replicas sweep
    announced = _events(publisher, "review.due")
    assert sorted(e["data"]["claimId"] for e in announced) == sorted(claims)  # type: ignore[index]
    assert {p["data"]["onReviewTimeout"] for p in due} == {"accept"}
    settled = status(bots[0], claims[0])
    assert settled["decidedBy"] == "deadline" and settled["payoutAmount"] == 4
    assert settled["payout"]["stage"] == "paid" and settled["payout"]["at"] is not None
    assert task_of(publisher, tasks[0]["id"])["status"] == "completed"
    assert market.balance(operator) == 24  # paid exactly once per task
    reviewed = _events(publisher, "claim.reviewed")
    assert sorted(e["data"]["claimId"] for e in reviewed) == sorted(claims)  # type: ignore[index]
    assert {e["data"]["decidedBy"] for e in reviewed} == {"deadline"}  # type: ignore[index]
    stats = ok(bots[0].http.get(f"/v1/publishers/{publisher.user['id']}/decisions"))
    assert stats == {"publisherId": publisher.user["id"], "decided": 6, "pending": 0, "medianHours": 2.0,
                     "p90Hours": 2.0, "decidedByDeadline": 6, "decidedByDeadlineShare": 1.0}
    # The publisher's public page shows the same, linked from its tasks' pages.
    site = httpx.Client(base_url=market.admin.base_url)
    assert f'href="/publishers/{publisher.user["id"]}"' in site.get(f"/tasks/{tasks[0]['id']}").text
    page = site.get(f"/publishers/{publisher.user['id']}").text
    assert "<dt>Median</dt><dd>2.0 h</dd>" in page and "<dt>Decided by the deadline</dt><dd>100 % (6)</dd>" in page


def test_a_task_that_escalates_hands_the_review_to_the_admins(replicas: list[Market]) -> None:
    market = replicas[1]
    publisher, reviewer, operator = market.publisher(funds=5), market.reviewer(), market.operator()
    bot = operator.bot()
    task = market.task(publisher, "fun", bounty=5, reviewWithinHours=1, onReviewTimeout="escalate")
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["fun"])
    assert status(bot, claim_id)["payout"]["stage"] == "escrowed"
    _advance(replicas, 3600 + 1)
    eventually(lambda: status(bot, claim_id)["escalatedAt"] is not None, True)
    escalated = status(bot, claim_id)
    assert escalated["status"] == "submitted" and escalated["decidedBy"] is None
    assert escalated["payout"]["stage"] == "escrowed"
    # review.due was told once (at the escalation, since no sweep ran at the warning point).
    due = _events(publisher, "review.due")
    assert [(e["data"]["claimId"], e["data"]["onReviewTimeout"]) for e in due] == [(claim_id, "escalate")]  # type: ignore[index]
    # Only the admins decide it now; it has left the reviewers' queue for the admins'.
    refused = reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"})
    expect_problem(refused, 403, "role_required")
    queue = ok(reviewer.http.get("/v1/review/queue", params={"pageSize": 100}))["data"]
    assert claim_id not in {c["id"] for c in queue}
    admin_queue = ok(market.admin.http.get("/v1/review/queue", params={"escalated": "true", "pageSize": 100}))
    assert claim_id in {c["id"] for c in admin_queue["data"]}
    decided = ok(market.admin.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}))
    assert decided["status"] == "accepted" and decided["decidedBy"] == "reviewer"
    assert decided["payout"]["stage"] == "paid" and market.balance(operator) == 5


def _rejected_and_appealed(market: Market, reviewer: object) -> tuple[object, str, str]:
    publisher, bot = market.publisher(funds=3), market.operator().bot()
    task = market.task(publisher, "fun", bounty=3)
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "reject", "comment": "no"}))  # type: ignore[attr-defined]
    appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "Look again."}))
    return bot, claim_id, str(appeal["id"])


def test_an_appeal_is_resolved_by_another_reviewer_or_past_its_window_by_an_admin(replicas: list[Market]) -> None:
    market = replicas[0]
    rejecting, other = market.reviewer(), market.reviewer()
    bot, claim_id, appeal_id = _rejected_and_appealed(market, rejecting)
    upheld = {"outcome": "upheld", "comment": "Fine after all."}
    expect_problem(rejecting.http.post(f"/v1/appeals/{appeal_id}/resolve", json=upheld), 403, "conflict_of_interest")
    assert ok(other.http.post(f"/v1/appeals/{appeal_id}/resolve", json=upheld))["outcome"] == "upheld"
    settled = status(bot, claim_id)
    assert settled["reviewState"] == "appeal_upheld" and settled["payout"]["stage"] == "paid"

    bot, claim_id, appeal_id = _rejected_and_appealed(market, rejecting)
    _advance(replicas, APPEAL_RESOLVE_WINDOW + 1)
    def escalated() -> bool:
        listed = ok(market.admin.http.get("/v1/appeals", params={"escalated": "true", "pageSize": 100}))["data"]
        return appeal_id in {a["id"] for a in listed}
    eventually(escalated, True)
    expect_problem(other.http.post(f"/v1/appeals/{appeal_id}/resolve", json=upheld), 403, "role_required")
    assert appeal_id not in {a["id"] for a in ok(other.http.get("/v1/appeals"))["data"]}
    resolved = ok(market.admin.http.post(f"/v1/appeals/{appeal_id}/resolve", json={"outcome": "denied"}))
    assert resolved["outcome"] == "denied" and resolved["escalatedAt"] is not None
    assert status(bot, claim_id)["payout"]["stage"] == "forfeited"
