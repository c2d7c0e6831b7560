"""Eligibility, probation and claim bonds (DESIGN.md section 14; docs/lifecycle.md, "Eligibility" and
"Claim bonds"), in process: refusals name what is missing, the task list says per task whether the caller
may claim it, bonds are returned or forfeited through the ledger, and a seeded random run keeps it balanced."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bountyboard.client import ApiError, Client
from tests.client.loop import cli_env, run_cli
from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, status, submit
from tests.support.api import Account, Bot
from tests.support.server import LiveServer, psycopg_dsn

pytestmark = pytest.mark.in_process


def _listed(bot: Bot, *, eligible: bool | None = None) -> dict[str, dict[str, Any]]:
    """The newest page of the board as the bot sees it, by task id (this test's tasks are the newest)."""
    params: dict[str, Any] = {"pageSize": 100}
    if eligible is not None:
        params["eligible"] = str(eligible).lower()
    return {task["id"]: task for task in ok(bot.http.get("/v1/agent/tasks", params=params))["data"]}


def test_an_ineligible_bot_is_refused_with_the_reason_and_the_list_says_so(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=500), market.reviewer()
    bot = market.operator().bot()
    picky = market.task(publisher, bounty=10, minReputation=0.5)
    seasoned = market.task(publisher, bounty=10, minCompleted=1)
    plain = market.task(publisher, bounty=10)
    assert (picky["minReputation"], seasoned["minCompleted"], plain["minReputation"]) == (0.5, 1, None)

    board = _listed(bot)
    assert (board[plain["id"]]["eligible"], board[plain["id"]]["ineligibleReason"]) == (True, None)
    assert board[picky["id"]]["eligible"] is False
    assert board[picky["id"]]["ineligibleReason"] == ("minReputation: the task asks for 0.5 on the lower end of the "
                                                      "success rate's interval; the claimant's is 0.0000")
    assert board[seasoned["id"]]["ineligibleReason"] == ("minCompleted: the task asks for 1 completed claims; the "
                                                         "claimant has 0")
    one = bot.http.get(f"/v1/agent/tasks/{picky['id']}")
    assert one.json()["ineligibleReason"] == board[picky["id"]]["ineligibleReason"]
    assert publisher.http.get(f"/v1/agent/tasks/{picky['id']}").headers["etag"] != one.headers["etag"]
    eligible = _listed(bot, eligible=True)
    assert plain["id"] in eligible and not {picky["id"], seasoned["id"]} & set(eligible)
    assert all(task["eligible"] for task in eligible.values())
    # The publisher sees its own tasks as not for it.
    own = ok(publisher.http.get("/v1/agent/tasks", params={"pageSize": 100}))["data"]
    assert {t["ineligibleReason"] for t in own if t["id"] == plain["id"]} == {"the caller published the task"}

    refused = expect_problem(bot.http.post(f"/v1/agent/tasks/{picky['id']}/claim"), 403, "not_eligible")
    assert [(r["requirement"], r["required"], r["actual"]) for r in refused["reasons"]] == [("minReputation", 0.5, 0)]
    assert refused["detail"].startswith(f"Not eligible to claim task {picky['id']}: minReputation:")
    refused = expect_problem(bot.http.post(f"/v1/agent/tasks/{seasoned['id']}/claim"), 403, "not_eligible")
    assert [(r["requirement"], r["required"], r["actual"]) for r in refused["reasons"]] == [("minCompleted", 1, 0)]

    # One accepted claim: minCompleted 1 is met; 1 of 1 has a lower end of 0.1467, below 0.5.
    seen = bot.http.get(f"/v1/agent/tasks/{seasoned['id']}")
    assert bot.http.get(f"/v1/agent/tasks/{seasoned['id']}",
                        headers={"If-None-Match": seen.headers["etag"]}).status_code == 304
    held = claim(bot, plain["id"])
    submit(bot, held, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{held}", json={"decision": "accept"}))
    board = _listed(bot)
    assert board[seasoned["id"]]["eligible"] is True and seasoned["id"] in _listed(bot, eligible=True)
    assert board[picky["id"]]["ineligibleReason"].endswith("the claimant's is 0.1467")
    # The bot's standing changed, not the task: its ETag of the task changed all the same.
    again = bot.http.get(f"/v1/agent/tasks/{seasoned['id']}", headers={"If-None-Match": seen.headers["etag"]})
    assert again.status_code == 200 and again.json()["eligible"] is True
    expect_problem(bot.http.post(f"/v1/agent/tasks/{picky['id']}/claim"), 403, "not_eligible")
    claim(bot, seasoned["id"])


def _bonded(market: Market, publisher: Account, bond: float = 2, **fields: Any) -> dict[str, Any]:
    return market.task(publisher, bounty=10, claimBond=bond, claimTtlSeconds=60, **fields)


def test_a_claim_bond_is_forfeited_on_expiry_and_release_and_returned_on_decision(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    operator = market.operator()
    market.credit(operator, 10)
    bot = operator.bot()

    expiring = _bonded(market, publisher)
    assert expiring["claimBond"] == 2
    held = claim(bot, expiring["id"])
    assert status(bot, held)["bond"] == {"amount": 2, "state": "held"}
    assert (market.balance(operator), market.balance(publisher)) == (8, 90)
    market.admin.advance_clock(61)
    expect_problem(bot.http.post(f"/v1/agent/claims/{held}/heartbeat"), 409, "claim_expired")
    assert status(bot, held)["bond"] == {"amount": 2, "state": "forfeited"}
    assert (market.balance(operator), market.balance(publisher)) == (8, 92)

    released = claim(bot, _bonded(market, publisher)["id"])
    ok(bot.http.post(f"/v1/agent/claims/{released}/release"))
    assert status(bot, released)["bond"]["state"] == "forfeited"
    assert (market.balance(operator), market.balance(publisher)) == (6, 84)

    rejected = claim(bot, _bonded(market, publisher)["id"])
    submit(bot, rejected, GOOD_CONTENT["fun"])
    assert status(bot, rejected)["bond"]["state"] == "held"
    ok(reviewer.http.post(f"/v1/review/claims/{rejected}", json={"decision": "reject"}))
    assert status(bot, rejected)["bond"]["state"] == "returned"
    assert market.balance(operator) == 6

    accepted = claim(bot, _bonded(market, publisher, bond=6)["id"])
    assert market.balance(operator) == 0
    submit(bot, accepted, GOOD_CONTENT["fun"])
    ok(reviewer.http.post(f"/v1/review/claims/{accepted}", json={"decision": "accept"}))
    assert status(bot, accepted)["bond"] == {"amount": 6, "state": "returned"}
    assert market.balance(operator) == 16  # the bond back and the bounty

    # The publisher's cancellation is not the claimant's failure: the bond comes back.
    cancelled = _bonded(market, publisher, bond=6)
    held = claim(bot, cancelled["id"])
    assert market.balance(operator) == 10
    ok(publisher.http.post(f"/v1/tasks/{cancelled['id']}/cancel"))
    assert status(bot, held)["bond"]["state"] == "returned" and market.balance(operator) == 16

    # Without the bond in the balance there is no claim; a task without a bond asks for none.
    poor = market.operator().bot()
    expect_problem(poor.http.post(f"/v1/agent/tasks/{_bonded(market, publisher)['id']}/claim"), 402,
                   "insufficient_funds")
    assert status(poor, claim(poor, market.task(publisher, bounty=1)["id"]))["bond"] is None


def _bond_accounts(server: LiveServer, claim_ids: list[str]) -> dict[str, tuple[str, str | None, int]]:
    """Per claim: its status, its bond state and what its bond account holds, read from the database."""
    statement = (f"SELECT c.id, c.status, c.bond_state, COALESCE(a.balance_cents, 0) FROM claims c "
                 f"LEFT JOIN ledger_accounts a ON a.name = 'bond:' || c.id WHERE c.id IN "
                 f"({','.join('?' * len(claim_ids))})")
    if server.backend == "sqlite":
        with contextlib.closing(sqlite3.connect(server.db_url.split("///", 1)[1])) as connection:
            rows = connection.execute(statement, claim_ids).fetchall()
    else:
        import psycopg2

        with contextlib.closing(psycopg2.connect(psycopg_dsn(server.db_url))) as connection:
            cursor = connection.cursor()
            cursor.execute(statement.replace("?", "%s"), claim_ids)
            rows = cursor.fetchall()
    return {row[0]: (row[1], row[2], int(row[3])) for row in rows}


def test_a_random_run_keeps_the_ledger_balanced(market: Market, server: LiveServer) -> None:
    rng = random.Random(27)
    publishers = [market.publisher(funds=2000) for _ in range(2)]
    reviewer = market.reviewer()
    operators = [market.operator() for _ in range(3)]
    for operator in operators:
        market.credit(operator, 40)
    bots = [operator.bot() for operator in operators for _ in range(2)]
    tasks: list[str] = []
    active: list[tuple[Bot, str]] = []
    submitted: list[str] = []
    claims: list[str] = []
    for _ in range(160):
        action = rng.choice(["publish", "claim", "claim", "submit", "decide", "release", "expire"])
        if action == "publish" or not tasks:
            task = market.task(rng.choice(publishers), bounty=rng.choice([0, 3, 12.5]),
                               claimBond=rng.choice([None, 0.5, 4]), claimTtlSeconds=60)
            tasks.append(task["id"])
        elif action == "claim":
            bot = rng.choice(bots)
            answer = bot.http.post(f"/v1/agent/tasks/{rng.choice(tasks[-8:])}/claim")
            assert answer.status_code in (200, 402, 409), answer.text
            if answer.status_code == 200:
                active.append((bot, answer.json()["claimId"]))
                claims.append(answer.json()["claimId"])
        elif action == "submit" and active:
            bot, held = active.pop(rng.randrange(len(active)))
            answer = bot.http.post(f"/v1/agent/claims/{held}/submit", json=GOOD_CONTENT["fun"])
            assert answer.status_code in (200, 409), answer.text  # 409: it expired meanwhile
            if answer.status_code == 200:
                submitted.append(held)
        elif action == "decide" and submitted:
            decision = rng.choice(["accept", "reject"])
            ok(reviewer.http.post(f"/v1/review/claims/{submitted.pop(rng.randrange(len(submitted)))}",
                                  json={"decision": decision}))
        elif action == "release" and active:
            bot, held = active.pop(rng.randrange(len(active)))
            assert bot.http.post(f"/v1/agent/claims/{held}/release").status_code in (200, 409)
        elif action == "expire" and active:
            market.admin.advance_clock(61)  # every active claim's TTL runs out; touching one lapses it
            bot, held = active.pop(rng.randrange(len(active)))
            expect_problem(bot.http.post(f"/v1/agent/claims/{held}/heartbeat"), 409, "claim_expired")
    check = market.ledger_check()
    assert check["balanced"] and check["totalCents"] == 0, check
    states = _bond_accounts(server, claims)
    assert len(states) == len(claims) > 20
    expected = {"active": "held", "submitted": "held", "accepted": "returned", "rejected": "returned",
                "released": "forfeited", "expired": "forfeited"}
    for claim_id, (claim_status, bond_state, held_cents) in states.items():
        if bond_state is not None:
            assert bond_state == expected[claim_status], (claim_id, claim_status, bond_state)
            assert (held_cents > 0) == (bond_state == "held"), (claim_id, held_cents)
    assert {state for _, state, _ in states.values()} >= {None, "held", "returned", "forfeited"}


def test_the_sdk_and_the_cli_show_eligibility_and_the_bond(market: Market, tmp_path: Path) -> None:
    publisher = market.publisher(funds=100)
    operator = market.operator()
    market.credit(operator, 5)
    bot = operator.bot()
    picky = market.task(publisher, bounty=10, minCompleted=2)
    bonded = market.task(publisher, bounty=10, claimBond=1.5)
    with Client(bot.base_url, bot.key, state_path=tmp_path / "state.json") as client:
        listed = {task["id"]: task for task in client.list_tasks(page_size=100)["data"]}
        assert (listed[picky["id"]]["eligible"], listed[bonded["id"]]["claimBond"]) == (False, 1.5)
        eligible = [task["id"] for task in client.iter_tasks(eligible=True)]
        assert bonded["id"] in eligible and picky["id"] not in eligible
        with pytest.raises(ApiError) as refused:
            client.claim(picky["id"])
        assert refused.value.status == 403 and refused.value.problem["code"] == "not_eligible"
        assert refused.value.problem["reasons"][0]["requirement"] == "minCompleted"
        held = client.claim(bonded["id"])["claimId"]
        assert client.claim_status(held)["bond"] == {"amount": 1.5, "state": "held"}

    env = cli_env(bot.base_url, bot.key, tmp_path)
    plain = market.task(publisher, bounty=1)
    table = run_cli("tasks", "list", env=env).stdout
    assert "eligible" in table and "no: minCompleted" in table and "yes" in table
    only = json.loads(run_cli("tasks", "list", "--eligible", "--json", env=env).stdout)["data"]
    assert plain["id"] in [t["id"] for t in only] and picky["id"] not in [t["id"] for t in only]
    assert all(task["eligible"] for task in only)
    shown = json.loads(run_cli("status", held, "--json", env=env).stdout)
    assert shown["bond"] == {"amount": 1.5, "state": "held"}
