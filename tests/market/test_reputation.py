"""Track records over HTTP on a private server whose clock the test moves (docs/lifecycle.md, "Reputation"):
the worked cases of a new bot, one of one and one half-life of decay, and which outcomes count."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, private_market, submit
from tests.support.api import client
from tests.support.server import backends

HALF_LIFE_DAYS = 10
DAY = 86400


@pytest.fixture(scope="module", params=backends())
def clocked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Market]:
    env: dict[str, str | None] = {"BOUNTYBOARD_REPUTATION_HALF_LIFE_DAYS": str(HALF_LIFE_DAYS),
                                  "BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "0.2"}
    with private_market(request.param, tmp_path_factory.mktemp(f"reputation-{request.param}"), env) as (_, market):
        yield market


@pytest.fixture(autouse=True)
def ledger_balanced(clocked: Market) -> Iterator[None]:
    yield
    assert clocked.ledger_check()["balanced"]


def test_reputation_of_a_bot_over_its_outcomes_and_time(clocked: Market) -> None:
    market = clocked
    publisher, reviewer, judge = market.publisher(funds=30), market.reviewer(), market.reviewer()
    operator = market.operator()
    bot = operator.bot()
    stranger = market.operator().bot()  # any valid key reads any bot's record
    path = f"/v1/bots/{bot.id}/reputation"

    new = ok(stranger.http.get(path))
    assert (new["botId"], new["operatorId"], new["halfLifeDays"], new["confidence"]) == (
        bot.id, operator.id, HALF_LIFE_DAYS, 0.95)
    assert new["overall"] == {"successes": 0, "failures": 0, "effectiveN": 0, "rate": None,
                              "interval": {"low": 0, "high": 1}, "lastActivityAt": None}
    assert new["byModule"] == {}
    expect_problem(client(market.admin.base_url).get(path), 401)
    expect_problem(stranger.http.get("/v1/bots/bot_nobody/reputation"), 404, "not_found")

    # One of one: rate 1, but the interval's lower end is only the 2.5 % quantile of Beta(3/2, 1/2).
    fun = market.task(publisher, "fun", bounty=10)
    won = claim(bot, fun["id"])
    receipt = submit(bot, won, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{won}", json={"decision": "accept"}))
    one = ok(stranger.http.get(path))["overall"]
    assert (one["successes"], one["effectiveN"]) == (pytest.approx(1, abs=1e-4), pytest.approx(1, abs=1e-4))
    assert (one["failures"], one["rate"]) == (0, 1)
    assert one["interval"]["low"] == pytest.approx(0.146746, abs=1e-4) and one["interval"]["high"] == 1
    assert one["lastActivityAt"] >= receipt["submittedAt"]  # the review, just after the submission

    # One half-life later the success counts half: Beta(1, 1/2), lower end 1 - 0.975^2.
    market.admin.advance_clock(HALF_LIFE_DAYS * DAY)
    half = ok(stranger.http.get(path))["overall"]
    assert half["successes"] == pytest.approx(0.5, abs=1e-4) and half["rate"] == 1
    assert half["interval"]["low"] == pytest.approx(1 - 0.975**2, abs=1e-4)

    # A rejection counts only once it stands: not while the appeal window is open, nor while appealed.
    translate = market.task(publisher, "translate", bounty=10)
    lost = claim(bot, translate["id"])
    submit(bot, lost, GOOD_CONTENT["translate"])
    ok(reviewer.http.post(f"/v1/review/claims/{lost}", json={"decision": "reject", "comment": "wrong register"}))
    assert ok(stranger.http.get(path))["overall"]["failures"] == 0
    appeal = ok(bot.http.post(f"/v1/agent/claims/{lost}/appeal", json={"reason": "It is right."}))
    assert ok(stranger.http.get(path))["overall"]["failures"] == 0
    ok(judge.http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "denied", "comment": "No."}))
    # A released claim counts against its bot too.
    abandoned = claim(bot, market.task(publisher, "fun", bounty=5)["id"])
    ok(bot.http.post(f"/v1/agent/claims/{abandoned}/release"))

    record = ok(stranger.http.get(path))
    overall, by_module = record["overall"], record["byModule"]
    assert overall["successes"] == pytest.approx(0.5, abs=1e-4) and overall["failures"] == pytest.approx(2, abs=1e-4)
    assert overall["rate"] == pytest.approx(0.2, abs=1e-4) and overall["effectiveN"] == pytest.approx(2.5, abs=1e-4)
    assert 0 < overall["interval"]["low"] < overall["rate"] < overall["interval"]["high"] < 1
    assert sorted(by_module) == ["fun", "translate"]
    assert by_module["translate"]["successes"] == 0
    assert by_module["translate"]["failures"] == pytest.approx(1, abs=1e-4)
    assert by_module["translate"]["interval"]["low"] == 0  # no success: the lower end is 0
    assert by_module["fun"]["failures"] == pytest.approx(1, abs=1e-4)
    assert by_module["fun"]["successes"] == pytest.approx(0.5, abs=1e-4)

    # The operator's record is the same here: all its claims are this bot's.
    mine = ok(stranger.http.get(f"/v1/operators/{operator.id}/reputation"))
    assert mine["operatorId"] == operator.id
    assert mine["overall"]["failures"] == pytest.approx(overall["failures"], abs=1e-4)


def test_a_cancelled_task_does_not_count_against_its_claimant(clocked: Market) -> None:
    market = clocked
    publisher, bot = market.publisher(funds=5), market.operator().bot()
    task = market.task(publisher, "fun", bounty=5)
    claim(bot, task["id"])
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/cancel"))  # the claim expires with its task
    assert ok(bot.http.get(f"/v1/bots/{bot.id}/reputation"))["overall"]["effectiveN"] == 0
    # A claim whose own TTL runs out does.
    ttl = claim(bot, market.task(publisher, "fun", bounty=0, claimTtlSeconds=60)["id"])
    market.admin.advance_clock(61)
    record = ok(bot.http.get(f"/v1/bots/{bot.id}/reputation"))["overall"]
    assert (record["failures"], record["successes"]) == (pytest.approx(1, abs=1e-4), 0), ttl
