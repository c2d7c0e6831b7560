"""Representative marketplace flows over HTTP, with the app in this process (the live tier covers the rest)."""

from __future__ import annotations

from typing import Any

from bountyboard.events.kinds import MODELS, EventKind
from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, status, submit, task_of
from tests.support.api import Account


def event_types(account: Account, task_id: str) -> list[str]:
    """The caller's event feed for one task, in feed order; each payload exactly one model of its kind."""
    page = ok(account.http.get("/v1/agent/events", params={"limit": 100}))
    events = [event for event in page["data"] if event["data"].get("taskId") == task_id]
    for event in events:
        shapes = [model for model in MODELS[EventKind(event["type"])] if set(model.model_fields) == set(event["data"])]
        assert len(shapes) == 1, event
        shapes[0].model_validate(event["data"])
    return [event["type"] for event in events]


def review(reviewer: Account, claim_id: str, decision: str, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = ok(reviewer.http.post(f"/v1/review/claims/{claim_id}",
                                                   json={"decision": decision, **fields}))
    return result


def test_a_bounty_from_publish_to_payout(market: Market) -> None:
    publisher, operator, reviewer = market.publisher(funds=25), market.operator(), market.reviewer()
    task = market.task(publisher, "fun", bounty=10)
    assert market.balance(publisher) == 15
    claim_id = claim(operator, task["id"])
    assert task_of(publisher, task["id"])["status"] == "in_progress"
    receipt = submit(operator, claim_id, GOOD_CONTENT["fun"])
    assert (receipt["status"], receipt["reviewState"]) == ("submitted", "pending")

    reviewed = review(reviewer, claim_id, "accept", comment="Lovely.")
    assert (reviewed["status"], reviewed["reviewState"]) == ("accepted", "accepted")
    assert task_of(publisher, task["id"])["status"] == "completed"
    assert market.balance(operator) == 10
    # The payout closes the task inside the review's transaction, so its event comes first.
    assert event_types(publisher, task["id"]) == [
        "task.published", "task.claimed", "claim.submitted", "task.closed", "claim.reviewed"]


def test_a_refused_move_answers_409_with_the_current_state(market: Market) -> None:
    publisher, operator = market.publisher(funds=10), market.operator()
    task = market.task(publisher, "fun", bounty=10)
    claim_id = claim(operator, task["id"])
    released = ok(operator.http.post(f"/v1/agent/claims/{claim_id}/release"))
    assert released["status"] == "released"
    assert task_of(publisher, task["id"])["status"] == "published"  # the slot is free again

    body = expect_problem(operator.http.post(f"/v1/agent/claims/{claim_id}/submit", json=GOOD_CONTENT["fun"]),
                          409, "invalid_transition")
    assert (body["currentStatus"], body["reviewState"]) == ("released", "not_submitted")
    body = expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/publish"), 409, "invalid_transition")
    assert body["currentStatus"] == "published"
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    assert market.balance(publisher) == 10  # the escrow came back


def test_an_upheld_appeal_pays_like_an_acceptance(market: Market) -> None:
    publisher, operator, reviewer = market.publisher(funds=8), market.operator(), market.reviewer()
    task = market.task(publisher, "translate", bounty=8)
    claim_id = claim(operator, task["id"])
    submit(operator, claim_id, GOOD_CONTENT["translate"])
    assert review(reviewer, claim_id, "reject", comment="Wrong register.")["reviewState"] == "rejected"

    appeal = ok(operator.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "It is formal enough."}))
    assert status(operator, claim_id)["reviewState"] == "appealed"
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"), 409, "reviews_pending")
    # The reviewer who rejected does not judge the appeal; another reviewer does.
    expect_problem(reviewer.http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "upheld"}),
                   403, "conflict_of_interest")
    resolved = ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "upheld"}))
    assert resolved["outcome"] == "upheld"
    assert (status(operator, claim_id)["status"], status(operator, claim_id)["reviewState"]) == (
        "accepted", "appeal_upheld")
    assert market.balance(operator) == 8
    assert task_of(publisher, task["id"])["status"] == "completed"


def test_an_arena_pays_its_split_by_score(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    first, second = market.operator(), market.operator()
    task = market.task(publisher, "arena", bounty=100)  # maxClaims 3, payoutSplit 0.7 / 0.3
    for operator, score in ((first, 6.0), (second, 9.0)):
        claim_id = claim(operator, task["id"])
        submit(operator, claim_id, GOOD_CONTENT["arena"])
        review(reviewer, claim_id, "accept", score=score)
    closed = ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))
    assert closed["status"] == "completed"
    assert (market.balance(second), market.balance(first)) == (70, 30)


def test_an_unfilled_arena_place_goes_back_to_the_publisher(market: Market) -> None:
    publisher, reviewer, winner = market.publisher(funds=100), market.reviewer(), market.operator()
    task = market.task(publisher, "arena", bounty=100)
    claim_id = claim(winner, task["id"])
    submit(winner, claim_id, GOOD_CONTENT["arena"])
    review(reviewer, claim_id, "accept", score=5.0)
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))
    assert (market.balance(winner), market.balance(publisher)) == (70, 30)


def test_a_cancelled_donate_task_refunds_every_contributor(market: Market) -> None:
    publisher, donor = market.publisher(funds=10), market.publisher(funds=5)
    task = market.task(publisher, "donate", bounty=10)
    funded = ok(donor.http.post(f"/v1/tasks/{task['id']}/fund", json={"amount": 4}))
    assert funded["bountyAmount"] == 14
    assert market.balance(donor) == 1
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    assert (market.balance(publisher), market.balance(donor)) == (10, 5)
