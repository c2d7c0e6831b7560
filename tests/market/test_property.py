"""Random sequences of marketplace operations over HTTP keep the invariants.

No slot is over-claimed, no money is created or lost, and no claim leaves a final state (an
accepted, released or expired claim stays so; a rejected one may only become accepted through an
upheld appeal).
"""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.market.support import Market, ok
from tests.support.api import Account, client

FUNDS = 30.0
FINAL = {"accepted", "released", "expired"}
OPERATIONS = st.lists(
    st.tuples(
        # Weighted towards the operations that move a claim forward, so sequences get somewhere.
        st.sampled_from(["claim"] * 3 + ["submit"] * 2 + ["accept"] * 2 + [
            "reject", "appeal", "uphold", "deny", "release", "heartbeat", "cancel", "close"]),
        st.integers(min_value=0, max_value=2),  # which bot
        st.integers(min_value=0, max_value=1),  # which task
    ),
    min_size=4, max_size=10,
)


class World:
    """One publisher with an arena (two slots) and a fun task, three bots of one operator, a reviewer."""

    def __init__(self, market: Market, reviewer: Account, judge: Account) -> None:
        self.market = market
        self.reviewer = reviewer
        self.judge = judge  # resolves appeals: never the reviewer who rejected
        self.publisher = market.publisher(funds=FUNDS)
        self.operator = market.operator()
        self.http = client(self.publisher.base_url)
        self.bot_keys = market.bot_keys(3, self.operator)
        self.tasks = [market.task(self.publisher, "arena", bounty=20, maxClaims=2, payoutSplit=[0.75, 0.25])["id"],
                      market.task(self.publisher, "fun", bounty=10)["id"]]
        self.claims: dict[tuple[int, int], str] = {}
        self.seen: dict[str, list[tuple[str, str]]] = {}

    def as_bot(self, bot: int, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, path, headers={"Authorization": f"Bearer {self.bot_keys[bot]}"}, **kwargs)

    def apply(self, operation: str, bot: int, task: int) -> None:
        task_id, claim_id = self.tasks[task], self.claims.get((bot, task))
        reviewer = self.reviewer.http
        if operation == "claim":
            answer = self.as_bot(bot, "POST", f"/v1/agent/tasks/{task_id}/claim")
            if answer.status_code == 200:
                self.claims[(bot, task)] = answer.json()["claimId"]
        elif operation in ("cancel", "close"):
            answer = self.publisher.http.post(f"/v1/tasks/{task_id}/{operation}")
        elif claim_id is None:
            return
        elif operation == "submit":
            answer = self.as_bot(bot, "POST", f"/v1/agent/claims/{claim_id}/submit",
                                 json={"resultType": "text", "content": f"answer of bot {bot}"})
        elif operation in ("release", "heartbeat"):
            answer = self.as_bot(bot, "POST", f"/v1/agent/claims/{claim_id}/{operation}")
        elif operation in ("accept", "reject"):
            answer = reviewer.post(f"/v1/review/claims/{claim_id}", json={"decision": operation, "score": bot})
        elif operation == "appeal":
            answer = self.as_bot(bot, "POST", f"/v1/agent/claims/{claim_id}/appeal", json={"reason": "look again"})
        else:
            appeal_id = ok(self.as_bot(bot, "GET", f"/v1/agent/claims/{claim_id}/status"))["appealId"]
            if appeal_id is None:
                return
            answer = self.judge.http.post(f"/v1/appeals/{appeal_id}/resolve", json={
                "outcome": "upheld" if operation == "uphold" else "denied", "score": 1.0})
        # Refusals are expected; they must be clear problems, never server errors.
        assert answer.status_code in (200, 402, 404, 409, 422), answer.text

    def check_task(self, task_id: str) -> float:
        """Slots and claim states of one task; returns what its escrow holds."""
        task = ok(self.publisher.http.get(f"/v1/tasks/{task_id}"))
        claims = ok(self.publisher.http.get(f"/v1/tasks/{task_id}/claims", params={"pageSize": 100}))["data"]
        holding = [c for c in claims if c["status"] in ("active", "submitted", "accepted")
                   or c["nextAction"] in ("appeal_or_done", "wait_for_appeal")]
        assert task["currentClaims"] == len(holding) <= task["maxClaims"], (task, claims)
        for claim in claims:
            self._follow(claim)
        return float(task["escrowAmount"])

    def check_money(self) -> None:
        held = sum(self.check_task(task_id) for task_id in self.tasks)
        total = self.market.balance(self.publisher) + self.market.balance(self.operator) + held
        assert abs(total - FUNDS) < 1e-9, total

    def _follow(self, claim: dict[str, Any]) -> None:
        history = self.seen.setdefault(claim["id"], [])
        state = (claim["status"], claim["reviewState"])
        if history and history[-1] != state:
            before = history[-1][0]
            assert before not in FINAL, (claim["id"], history, state)
            if before == "rejected":
                assert state == ("accepted", "appeal_upheld"), (claim["id"], history, state)
        history.append(state)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_random_operations_keep_the_invariants(market: Market, operations: list[tuple[str, int, int]]) -> None:
    if not hasattr(market, "shared_reviewer"):
        market.shared_reviewer = market.reviewer()  # type: ignore[attr-defined]
        market.shared_judge = market.reviewer()  # type: ignore[attr-defined]
    world = World(market, market.shared_reviewer, market.shared_judge)  # type: ignore[attr-defined]
    for operation, bot, task in operations:
        world.apply(operation, bot, task)
        world.check_task(world.tasks[task])  # an operation only moves the claims of its own task
        assert market.ledger_check()["balanced"]
    world.check_money()
