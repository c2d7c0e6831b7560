"""The four public kinds, emitted by the real marketplace routes, arrive signed at real receivers."""

from __future__ import annotations

from bountyboard.events.kinds import MODELS, PUBLIC_KINDS, EventKind
from tests.events.conftest import Hooks
from tests.events.helpers import feed, subscribe
from tests.events.receiver import Receiver
from tests.market.support import GOOD_CONTENT, Market, claim, ok, submit

PUBLIC = [kind.value for kind in PUBLIC_KINDS]


def test_each_public_kind_arrives_signed_to_bot_and_operator(hooks: Hooks) -> None:
    market = Market(hooks.admin)
    publisher, reviewer, operator = market.publisher(funds=50), market.reviewer(), market.operator()
    bot = operator.bot()
    with Receiver() as bot_receiver, Receiver() as operator_receiver, Receiver() as publisher_receiver:
        bot_hook = subscribe(bot, bot_receiver.url, PUBLIC)
        operator_hook = subscribe(operator, operator_receiver.url, ["claim.reviewed", "appeal.resolved"])
        publisher_hook = subscribe(publisher, publisher_receiver.url, ["claim.reviewed"])

        task = market.task(publisher, "exchange", bounty=20)
        claim_id = claim(bot, task["id"])
        submit(bot, claim_id, GOOD_CONTENT["exchange"])
        ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={
            "decision": "reject", "comment": "glossary missing", "deliverables": [True, False]}))
        appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "It is in the appendix."}))
        ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve",
                                       json={"outcome": "upheld", "comment": "Found."}))

        to_bot = bot_receiver.wait_for_ids(4)
        payloads = [request.verified(bot_hook["secret"]) for request in to_bot]
        assert [p["type"] for p in payloads] == PUBLIC
        for payload in payloads:
            assert set(payload) == {"type", "timestamp", "data"}
            [model] = MODELS[EventKind(payload["type"])]  # the payload contract of the kind
            assert set(payload["data"]) == set(model.model_fields), payload
            model.model_validate(payload["data"])
            assert payload["data"]["claimId"] == claim_id and payload["data"]["taskId"] == task["id"]
        assert payloads[2]["data"]["decision"] == "rejected" and payloads[3]["data"]["outcome"] == "upheld"
        polled = feed(bot, types=",".join(PUBLIC))
        assert [e["id"] for e in polled] == [r.id for r in to_bot]

        to_operator = operator_receiver.wait_for_ids(2)
        assert [r.verified(operator_hook["secret"])["type"] for r in to_operator] == PUBLIC[2:]
        assert [r.id for r in to_operator] == [r.id for r in to_bot[2:]]
        [to_publisher] = publisher_receiver.wait_for_ids(1)
        assert to_publisher.verified(publisher_hook["secret"])["type"] == "claim.reviewed"
