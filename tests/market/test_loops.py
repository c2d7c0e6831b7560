"""A full loop for each of the eight modules, over HTTP, with the balances checked after each step."""

from __future__ import annotations

import json

import pytest

from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, status, submit, task_of
from tests.support.api import Account, Bot

pytestmark = pytest.mark.in_process


def _events(holder: Bot | Account, types: str) -> list[str]:
    return [event["type"] for event in ok(holder.http.get("/v1/agent/events", params={"types": types}))["data"]]


@pytest.mark.parametrize("module", ["fun", "crew", "translate"])
def test_single_winner_loop(market: Market, module: str) -> None:
    publisher, reviewer = market.publisher(funds=50), market.reviewer()
    bot = market.operator().bot()

    draft = market.draft(publisher, module, bounty=12.5)
    assert market.balance(publisher) == 50 and draft["escrowStatus"] == "none"
    published = ok(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"))
    assert published["escrowStatus"] == "held" and published["escrowAmount"] == 12.5
    assert market.balance(publisher) == 37.5

    listed = ok(bot.http.get("/v1/agent/tasks", params={"module": module}))
    mine = [task for task in listed["data"] if task["id"] == draft["id"]]
    assert mine and mine[0]["nextAction"] == "claim" and mine[0]["allowedArtifactTypes"]
    assert {"page", "pageSize", "total", "hasMore"} <= set(listed)

    claim_id = claim(bot, draft["id"])
    assert task_of(publisher, draft["id"])["status"] == "in_progress"
    assert status(bot, claim_id)["nextAction"] == "submit"

    receipt = submit(bot, claim_id, GOOD_CONTENT[module])
    assert receipt["reviewState"] == "pending" and receipt["nextAction"] == "wait_for_review"
    current = status(bot, claim_id)
    assert current["status"] == "submitted" and current["resultType"] == GOOD_CONTENT[module]["resultType"]
    assert market.balance(bot.operator) == 0 and market.balance(publisher) == 37.5

    queue = ok(reviewer.http.get("/v1/review/queue", params={"module": module}))
    assert claim_id in [item["id"] for item in queue["data"]]
    reviewed = ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept", "comment": "ok"}))
    assert reviewed["status"] == "accepted" and reviewed["payoutAmount"] == 12.5

    assert market.balance(bot.operator) == 12.5 and market.balance(publisher) == 37.5
    done = task_of(publisher, draft["id"])
    assert done["status"] == "completed" and done["escrowStatus"] == "released"
    assert status(bot, claim_id)["nextAction"] == "done"
    assert _events(bot, "task.claimed,claim.submitted,claim.reviewed") == [
        "task.claimed", "claim.submitted", "claim.reviewed"]
    assert _events(bot.operator, "claim.reviewed") == ["claim.reviewed"]


def test_exchange_loop_with_rejection_and_upheld_appeal(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "exchange", bounty=40)
    assert market.balance(publisher) == 60

    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["exchange"])
    expect_problem(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={
        "decision": "accept", "deliverables": [True, False]}), 422, "deliverables_incomplete")
    rejected = ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={
        "decision": "reject", "comment": "glossary missing", "deliverables": [True, False]}))
    assert rejected["status"] == "rejected" and rejected["deliverables"] == [True, False]
    assert rejected["nextAction"] == "appeal_or_done" and rejected["appealDeadline"]
    assert market.balance(bot.operator) == 0 and market.balance(publisher) == 60
    # The rejected claim keeps its slot through the appeal window.
    assert task_of(publisher, task["id"])["status"] == "in_progress"

    appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={
        "reason": "The glossary is in the appendix.", "evidenceUrls": ["https://files.example.com/appendix"]}))
    assert appeal["status"] == "open"
    assert status(bot, claim_id)["nextAction"] == "wait_for_appeal"
    assert appeal["id"] in [a["id"] for a in ok(reviewer.http.get("/v1/appeals"))["data"]]

    resolved = ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve", json={
        "outcome": "upheld", "comment": "Found it."}))
    assert resolved["outcome"] == "upheld"
    final = status(bot, claim_id)
    assert final["status"] == "accepted" and final["reviewState"] == "appeal_upheld"
    assert market.balance(bot.operator) == 40 and market.balance(publisher) == 60
    assert task_of(publisher, task["id"])["status"] == "completed"


def test_arena_loop_ranks_and_pays_the_split(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    bots = [market.operator().bot() for _ in range(3)]
    task = market.task(publisher, "arena", bounty=100)
    assert market.balance(publisher) == 0

    claims = [claim(bot, task["id"]) for bot in bots]
    assert task_of(publisher, task["id"])["status"] == "in_progress"
    expect_problem(market.operator().bot().http.post(f"/v1/agent/tasks/{task['id']}/claim"), 409, "no_slot_free")
    for bot, claim_id in zip(bots, claims, strict=True):
        submit(bot, claim_id, GOOD_CONTENT["arena"])

    expect_problem(reviewer.http.post(f"/v1/review/claims/{claims[0]}", json={"decision": "accept"}),
                   422, "score_required")
    ok(reviewer.http.post(f"/v1/review/claims/{claims[0]}", json={"decision": "accept", "score": 71.5}))
    ok(reviewer.http.post(f"/v1/review/claims/{claims[1]}", json={"decision": "accept", "score": 90}))
    ok(reviewer.http.post(f"/v1/review/claims/{claims[2]}", json={"decision": "reject", "comment": "fails tests"}))
    assert all(market.balance(bot.operator) == 0 for bot in bots)

    appeal = ok(bots[2].operator.http.post(f"/v1/agent/claims/{claims[2]}/appeal", json={"reason": "flaky CI"}))
    expect_problem(publisher.http.post(f"/v1/tasks/{task['id']}/close"), 409, "reviews_pending")
    ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "denied", "comment": "no"}))
    assert status(bots[2], claims[2])["reviewState"] == "appeal_denied"

    closed = ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))
    assert closed["status"] == "completed" and closed["escrowStatus"] == "released"
    assert market.balance(bots[1].operator) == 70  # best score, first place
    assert market.balance(bots[0].operator) == 30
    assert market.balance(bots[2].operator) == 0 and market.balance(publisher) == 0
    first = status(bots[1], claims[1])
    assert first["rank"] == 1 and first["payoutAmount"] == 70

    board = ok(bots[0].http.get("/v1/leaderboard", params={"limit": 100}))
    arena = next(a for a in board["arenas"] if a["taskId"] == task["id"])
    assert [r["claimId"] for r in arena["rankings"]] == [claims[1], claims[0]]
    reputation = {b["botId"]: b for b in board["bots"]}
    assert reputation[bots[1].id]["accepted"] == 1 and reputation[bots[1].id]["earned"] == 70
    # A bot with nothing accepted ranks below every bot with something, of which a shared database holds
    # many: its own track record says the rejection stood.
    record = ok(bots[0].http.get(f"/v1/bots/{bots[2].id}/reputation"))["overall"]
    assert (record["successes"], record["failures"]) == (0, pytest.approx(1, abs=1e-3))


def test_arena_with_fewer_winners_than_places_refunds_the_rest(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=10), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "arena", bounty=10, payoutSplit=[0.5, 0.25, 0.25])
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, {"resultType": "text", "content": "an answer"})
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept", "score": 1}))
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))
    assert market.balance(bot.operator) == 5 and market.balance(publisher) == 5


def test_donate_loop_with_funding(market: Market) -> None:
    publisher, donor, reviewer = market.publisher(funds=20), market.publisher(funds=15), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "donate", bounty=5)
    assert market.balance(publisher) == 15

    funded = ok(donor.http.post(f"/v1/tasks/{task['id']}/fund", json={"amount": "7.25"}))
    assert funded["bountyAmount"] == 12.25 and funded["escrowAmount"] == 12.25
    assert market.balance(donor) == 7.75
    expect_problem(donor.http.post(f"/v1/tasks/{task['id']}/fund", json={"amount": 100}), 402, "insufficient_funds")
    assert market.balance(donor) == 7.75

    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, GOOD_CONTENT["donate"])
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}))
    assert market.balance(bot.operator) == 12.25
    assert market.balance(publisher) == 15 and market.balance(donor) == 7.75


def test_donate_cancel_refunds_every_funder(market: Market) -> None:
    publisher, donor = market.publisher(funds=20), market.publisher(funds=15)
    task = market.task(publisher, "donate", bounty=5)
    ok(donor.http.post(f"/v1/tasks/{task['id']}/fund", json={"amount": 3}))
    cancelled = ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))
    assert cancelled["status"] == "cancelled" and cancelled["escrowStatus"] == "refunded"
    assert market.balance(publisher) == 20 and market.balance(donor) == 15


def test_judge_loop(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=30), market.reviewer()
    worker, judge = market.operator().bot(), market.operator().bot()
    work = market.task(publisher, "fun", bounty=10)
    work_claim = claim(worker, work["id"])
    submit(worker, work_claim, {"resultType": "text", "content": "A limerick about ducks."})

    rubric = {"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 10}}}
    task = market.task(publisher, "judge", bounty=8, targetClaimId=work_claim, rubric=rubric)
    assert market.balance(publisher) == 12
    expect_problem(judge.http.get(f"/v1/judge/tasks/{task['id']}/target"), 403, "claim_required")
    judge_claim = claim(judge, task["id"])
    target = ok(judge.http.get(f"/v1/judge/tasks/{task['id']}/target"))
    assert target["targetClaimId"] == work_claim
    assert target["submission"]["content"] == "A limerick about ducks."

    bad = {"resultType": "text", "content": json.dumps({"verdict": "pass", "score": 11, "rationale": "funny"})}
    expect_problem(judge.http.post(f"/v1/agent/claims/{judge_claim}/submit", json=bad), 422, "invalid_submission")
    submit(judge, judge_claim, {"resultType": "text",
                                "content": json.dumps({"verdict": "pass", "score": 9, "rationale": "funny"})})
    ok(reviewer.http.post(f"/v1/review/claims/{judge_claim}", json={"decision": "accept"}))
    assert market.balance(judge.operator) == 8 and market.balance(publisher) == 12


def test_show_tasks_are_listed_but_not_claimable(market: Market) -> None:
    publisher = market.publisher()
    expect_problem(publisher.http.post("/v1/tasks", json={"module": "show", "title": "demo", "bountyAmount": 1}),
                   422, "invalid_task")
    task = market.task(publisher, "show", bounty=0)
    bot = market.operator().bot()
    listed = ok(bot.http.get("/v1/agent/tasks", params={"module": "show", "pageSize": 100}))
    shown = next(t for t in listed["data"] if t["id"] == task["id"])
    assert shown["nextAction"] == "none"
    assert shown["allowedArtifactTypes"] == ["text", "image", "github_url", "web_app_url", "external_link"]
    body = expect_problem(bot.http.post(f"/v1/agent/tasks/{task['id']}/claim"), 409, "module_not_claimable")
    assert body["currentStatus"] == "published"
    assert task_of(publisher, task["id"])["currentClaims"] == 0
