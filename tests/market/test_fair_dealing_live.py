"""Probation and claim bonds over HTTP against a live server with the test clock, on every backend: a new
bot is refused with the reason and the list says so; a bond is forfeited when the sweep expires its claim
and returned when the submission is decided (docs/lifecycle.md, "Eligibility" and "Claim bonds")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.market.support import (
    GOOD_CONTENT,
    Market,
    claim,
    eventually,
    expect_problem,
    ok,
    private_market,
    status,
    submit,
)
from tests.support.api import Bot
from tests.support.server import backends

APPEAL_WINDOW = 600


@pytest.fixture(scope="module", params=backends())
def clocked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Market]:
    env: dict[str, str | None] = {"BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "0.2",
                                  "BOUNTYBOARD_APPEAL_WINDOW_SECONDS": str(APPEAL_WINDOW),
                                  "BOUNTYBOARD_PROBATION_OUTCOMES": "3", "BOUNTYBOARD_PROBATION_MAX_CLAIMS": "1",
                                  "BOUNTYBOARD_PROBATION_MAX_BOUNTY": "25"}
    with private_market(request.param, tmp_path_factory.mktemp(f"fair-{request.param}"), env) as (_, market):
        yield market


@pytest.fixture(autouse=True)
def ledger_balanced(clocked: Market) -> Iterator[None]:
    yield
    check = clocked.ledger_check()
    assert check["balanced"] and check["totalCents"] == 0, check


def _listed(bot: Bot, *, eligible: bool = False) -> dict[str, dict[str, Any]]:
    params: dict[str, Any] = {"pageSize": 100, **({"eligible": "true"} if eligible else {})}
    return {task["id"]: task for task in ok(bot.http.get("/v1/agent/tasks", params=params))["data"]}


def test_a_bot_on_probation_is_refused_with_the_reason_and_the_list_says_so(clocked: Market) -> None:
    market = clocked
    publisher, reviewer = market.publisher(funds=500), market.reviewer()
    bot = market.operator().bot(maxActiveClaims=3)  # probation's limit is the tighter one
    small, big = market.task(publisher, bounty=10), market.task(publisher, bounty=50)

    board = _listed(bot)
    assert (board[small["id"]]["eligible"], board[small["id"]]["ineligibleReason"]) == (True, None)
    assert board[big["id"]]["eligible"] is False
    assert board[big["id"]]["ineligibleReason"] == ("probation: with 0 of 3 decided outcomes the claimant takes "
                                                    "bounties up to 25.00")
    assert set(_listed(bot, eligible=True)) == {small["id"]}
    refused = expect_problem(bot.http.post(f"/v1/agent/tasks/{big['id']}/claim"), 403, "not_eligible")
    assert [(r["requirement"], r["required"], r["actual"]) for r in refused["reasons"]] == [
        ("probationMaxBounty", 25, 50)]

    # On probation one claim at a time: while it holds one, nothing else is eligible.
    held = claim(bot, small["id"])
    other = market.task(publisher, bounty=5)
    assert _listed(bot)[other["id"]]["ineligibleReason"].endswith("holds at most 1 active claim(s); it holds 1")
    assert _listed(bot, eligible=True) == {}
    refused = expect_problem(bot.http.post(f"/v1/agent/tasks/{other['id']}/claim"), 403, "not_eligible")
    assert [r["requirement"] for r in refused["reasons"]] == ["probationMaxClaims"]

    # Three decided outcomes end probation: two claims at once, and a bounty above the cap.
    submit(bot, held, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{held}", json={"decision": "accept"}))
    for _ in range(2):
        rejected = claim(bot, market.task(publisher, bounty=1)["id"])
        submit(bot, rejected, GOOD_CONTENT["fun"])
        ok(reviewer.http.post(f"/v1/review/claims/{rejected}", json={"decision": "reject"}))
    assert _listed(bot)[big["id"]]["eligible"] is False  # rejections in their appeal window are not decided yet
    before = bot.http.get("/v1/agent/tasks", params={"pageSize": 100})
    assert bot.http.get("/v1/agent/tasks", params={"pageSize": 100},
                        headers={"If-None-Match": before.headers["etag"]}).status_code == 304
    market.admin.advance_clock(APPEAL_WINDOW + 1)
    # The clock moved the bot's standing (and the sweep reopens the rejected tasks): no stale 304.
    after = bot.http.get("/v1/agent/tasks", params={"pageSize": 100}, headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200 and after.headers["etag"] != before.headers["etag"]
    assert {t["id"]: t for t in after.json()["data"]}[big["id"]]["eligible"] is True
    claim(bot, other["id"])
    claim(bot, big["id"])


def test_a_bond_is_forfeited_when_the_sweep_expires_the_claim_and_returned_on_decision(clocked: Market) -> None:
    market = clocked
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    operator = market.operator()
    market.credit(operator, 10)
    bot = operator.bot()

    lapsing = claim(bot, market.task(publisher, bounty=10, claimBond=3, claimTtlSeconds=60)["id"])
    assert status(bot, lapsing)["bond"] == {"amount": 3, "state": "held"}
    assert (market.balance(operator), market.balance(publisher)) == (7, 90)
    market.admin.advance_clock(61)
    eventually(lambda: status(bot, lapsing)["bond"]["state"], "forfeited")  # the sweep, nobody touching it
    assert (market.balance(operator), market.balance(publisher)) == (7, 93)

    decided = claim(bot, market.task(publisher, bounty=10, claimBond=3)["id"])
    submit(bot, decided, GOOD_CONTENT["fun"])
    assert market.balance(operator) == 4
    ok(reviewer.http.post(f"/v1/review/claims/{decided}", json={"decision": "accept"}))
    assert status(bot, decided)["bond"] == {"amount": 3, "state": "returned"}
    assert market.balance(operator) == 17  # the bond back and the bounty

    # Accepted by the review deadline, nobody reviewing: the bond comes back with the bounty too.
    unreviewed = claim(bot, market.task(publisher, bounty=10, claimBond=3, reviewWithinHours=1)["id"])
    submit(bot, unreviewed, GOOD_CONTENT["fun"])
    assert market.balance(operator) == 14
    market.admin.advance_clock(3601)
    eventually(lambda: status(bot, unreviewed)["bond"]["state"], "returned")
    assert status(bot, unreviewed)["decidedBy"] == "deadline" and market.balance(operator) == 27
