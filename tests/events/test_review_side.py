"""Publishers and reviewers told (DESIGN.md section 14): their user keys subscribe to ``claim.submitted``,
``appeal.opened`` and ``review.due`` and hear of their own tasks only; operators' user keys still may not."""

from __future__ import annotations

import time

from tests.events.conftest import Hooks
from tests.events.helpers import subscribe
from tests.events.receiver import Received, Receiver
from tests.market.support import GOOD_CONTENT, Market, claim, expect_problem, ok, submit

TOLD = ["claim.submitted", "appeal.opened", "review.due"]


def _told(received: list[Received], secret: str) -> set[tuple[str, str]]:
    return {(payload["type"], payload["data"]["claimId"]) for payload in (r.verified(secret) for r in received)}


def test_a_publisher_and_a_reviewer_are_told_of_submissions_and_appeals(hooks: Hooks) -> None:
    market = Market(hooks.admin)
    publisher, other_publisher = market.publisher(funds=20), market.publisher(funds=20)
    reviewer, operator = market.reviewer(), market.operator()
    bot = operator.bot()
    with Receiver() as to_publisher, Receiver() as to_other, Receiver() as to_reviewer:
        publisher_hook = subscribe(publisher, to_publisher.url, TOLD)
        assert publisher_hook["events"] == TOLD and publisher_hook["botId"] is None
        other_hook = subscribe(other_publisher, to_other.url, ["claim.submitted"])
        reviewer_hook = subscribe(reviewer, to_reviewer.url, ["claim.submitted", "appeal.opened"])
        try:
            task = market.task(publisher, "fun", bounty=10)
            claim_id = claim(bot, task["id"])
            receipt = submit(bot, claim_id, GOOD_CONTENT["fun"])
            ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "reject", "comment": "no"}))
            appeal = ok(bot.http.post(f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "Look again."}))

            # Verified with the standardwebhooks library, under each subscription's own secret.
            submitted, opened = [r.verified(publisher_hook["secret"]) for r in to_publisher.wait_for_ids(2)]
            assert submitted["type"] == "claim.submitted" and opened["type"] == "appeal.opened"
            assert submitted["data"]["claimId"] == claim_id
            assert submitted["data"]["submissionId"] == receipt["submissionId"]
            assert opened["data"]["appealId"] == appeal["id"]
            expected = {("claim.submitted", claim_id), ("appeal.opened", claim_id)}
            to_reviewer.wait_until(lambda got: expected <= _told(got, reviewer_hook["secret"]))
            time.sleep(0.5)  # nothing else is on its way to the publisher
            assert len({r.id for r in to_publisher.received}) == 2
            # Another publisher hears nothing of a task it did not publish.
            assert all(r.verified(other_hook["secret"])["data"]["taskId"] != task["id"] for r in to_other.received)
        finally:
            for owner, hook in ((publisher, publisher_hook), (other_publisher, other_hook),
                                (reviewer, reviewer_hook)):
                assert owner.http.delete(f"/v1/agent/webhooks/{hook['id']}").status_code in (200, 204)


def test_an_operators_user_key_still_may_not_subscribe_to_the_review_side(hooks: Hooks) -> None:
    market = Market(hooks.admin)
    operator, publisher = market.operator(), market.publisher()
    for kind in TOLD:
        problem = expect_problem(operator.http.post("/v1/agent/webhooks", json={
            "url": "https://hooks.example.com/x", "events": [kind]}), 422, "event_not_subscribable")
        assert kind in problem["detail"]
    # Nor change a subscription to it.
    hook = subscribe(operator, "https://hooks.example.com/x", ["claim.reviewed"])
    expect_problem(operator.http.patch(f"/v1/agent/webhooks/{hook['id']}", json={"events": ["claim.submitted"]}),
                   422, "event_not_subscribable")
    # A publisher may, but not to the bot-side kinds of claims it does not hold.
    expect_problem(publisher.http.post("/v1/agent/webhooks", json={
        "url": "https://hooks.example.com/x", "events": ["task.claimed"]}), 422, "event_not_subscribable")
