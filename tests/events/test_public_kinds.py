"""The public kinds, emitted by the real marketplace routes (and the checks runner), arrive signed at real
receivers."""

from __future__ import annotations

import time

from bountyboard.events.kinds import MODELS, PUBLIC_KINDS, EventKind
from tests.events.conftest import Hooks
from tests.events.helpers import feed, subscribe
from tests.events.receiver import Receiver
from tests.market.support import GOOD_CONTENT, Market, claim, ok, status, submit

PUBLIC = [kind.value for kind in PUBLIC_KINDS]
# The order a claim meets them: its advisory checks end before the review.
IN_ORDER = ["task.claimed", "claim.submitted", "claim.checked", "claim.reviewed", "appeal.resolved"]


def test_each_public_kind_arrives_signed_to_bot_and_operator(hooks: Hooks) -> None:
    market = Market(hooks.admin)
    publisher, reviewer, operator = market.publisher(funds=50), market.reviewer(), market.operator()
    bot = operator.bot()
    with Receiver() as bot_receiver, Receiver() as operator_receiver, Receiver() as publisher_receiver:
        bot_hook = subscribe(bot, bot_receiver.url, PUBLIC)
        operator_hook = subscribe(operator, operator_receiver.url, ["claim.reviewed", "appeal.resolved"])
        publisher_hook = subscribe(publisher, publisher_receiver.url, ["claim.reviewed"])

        task = market.task(publisher, "exchange", bounty=20,
                           checks={"binding": False, "rules": [{"kind": "minLength", "value": 1}]})
        claim_id = claim(bot, task["id"])
        submit(bot, claim_id, GOOD_CONTENT["exchange"])
        deadline = time.monotonic() + 60
        while status(bot, claim_id)["checkState"] in ("queued", "running"):
            assert time.monotonic() < deadline, "the checks did not end"
            time.sleep(0.2)
        ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={
            "decision": "reject", "comment": "glossary missing", "deliverables": [True, False]}))
        appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "It is in the appendix."}))
        ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve",
                                       json={"outcome": "upheld", "comment": "Found."}))

        to_bot = bot_receiver.wait_for_ids(5)
        payloads = [request.verified(bot_hook["secret"]) for request in to_bot]
        assert sorted(PUBLIC) == sorted(IN_ORDER) and [p["type"] for p in payloads] == IN_ORDER
        for payload in payloads:
            assert set(payload) == {"type", "timestamp", "data"}
            [model] = MODELS[EventKind(payload["type"])]  # the payload contract of the kind
            assert set(payload["data"]) == set(model.model_fields), payload
            model.model_validate(payload["data"])
            assert payload["data"]["claimId"] == claim_id and payload["data"]["taskId"] == task["id"]
        assert payloads[2]["data"]["checks"]["status"] == "passed" and payloads[2]["data"]["attemptsLeft"] is not None
        assert payloads[3]["data"]["decision"] == "rejected" and payloads[4]["data"]["outcome"] == "upheld"
        polled = feed(bot, types=",".join(PUBLIC))
        assert [e["id"] for e in polled] == [r.id for r in to_bot]

        to_operator = operator_receiver.wait_for_ids(2)
        assert [r.verified(operator_hook["secret"])["type"] for r in to_operator] == IN_ORDER[3:]
        assert [r.id for r in to_operator] == [r.id for r in to_bot[3:]]
        [to_publisher] = publisher_receiver.wait_for_ids(1)
        assert to_publisher.verified(publisher_hook["secret"])["type"] == "claim.reviewed"
