"""The SDK against a live server: scopes fail closed, claims and submissions survive lost answers."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest

from bountyboard.client import Client, MissingScopeError
from tests.cli.proxy import SwallowingProxy
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer


@pytest.fixture()
def market(admin: Admin) -> Marketplace:
    return Marketplace(admin)


def test_a_missing_scope_fails_closed_before_any_request(server: LiveServer, market: Marketplace,
                                                         tmp_path: Path) -> None:
    task = market.publish("arena")
    reader = market.operator.bot(scopes=["tasks:read", "claims:read"])
    with Client(server.base_url, reader.key, state_path=tmp_path / "state.json") as client:
        with pytest.raises(MissingScopeError) as raised:
            client.require_scopes(["tasks:read", "tasks:claim", "claims:read", "claims:submit"])
        assert raised.value.missing == ["claims:submit", "tasks:claim"]
        assert client.get_task(task["id"])["id"] == task["id"]
        with pytest.raises(MissingScopeError):
            client.claim(task["id"])
    assert market.claims_of(task["id"]) == []
    assert not (tmp_path / "state.json").exists()


def test_a_lost_claim_answer_is_replayed_not_repeated(server: LiveServer, market: Marketplace,
                                                      tmp_path: Path) -> None:
    task = market.publish("arena")
    state = tmp_path / "state.json"
    with SwallowingProxy(server.base_url, r"/claim$") as proxy, \
            Client(proxy.url, market.bot.key, state_path=state, timeout=3, max_retries=0) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.claim(task["id"])
        assert proxy.held_status == 200
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    [claim] = market.claims_of(task["id"])
    with Client(server.base_url, market.bot.key, state_path=state) as client:
        created = client.claim(task["id"])  # the same call again, after the "crash"
        assert created["claimId"] == claim["id"]
        assert claim["id"] in client.persisted_claims()
        assert client.state.get("pendingClaims") == {}


def test_a_lost_submission_receipt_is_replayed_not_repeated(server: LiveServer, market: Marketplace,
                                                            tmp_path: Path) -> None:
    task = market.publish("arena")
    state = tmp_path / "state.json"
    with Client(server.base_url, market.bot.key, state_path=state) as client:
        claim_id = client.claim(task["id"])["claimId"]
    with SwallowingProxy(server.base_url, r"/submit$") as proxy, \
            Client(proxy.url, market.bot.key, state_path=state, timeout=3, max_retries=0) as client, \
            pytest.raises(httpx.ReadTimeout):
        client.submit(claim_id, "text", "quicksort")
    with Client(server.base_url, market.bot.key, state_path=state) as client:
        receipt = client.submit(claim_id, "text", "quicksort")
        assert client.state.get("pendingSubmissions") == {}
    [claim] = market.claims_of(task["id"])
    assert claim["submission"]["id"] == receipt["submissionId"]
    submitted = [e for e in market.bot_events("claim.submitted") if e["data"]["claimId"] == claim_id]
    assert len(submitted) == 1


def test_events_follow_the_claim(server: LiveServer, market: Marketplace, tmp_path: Path) -> None:
    task = market.publish("arena")
    with Client(server.base_url, market.bot.key, state_path=tmp_path / "s.json") as client:
        start = client.latest_cursor()
        claim_id = client.claim(task["id"])["claimId"]
        seen = [(event["type"], event["data"]["claimId"]) for event, _ in client.iter_events(after=start)]
        assert seen == [("task.claimed", claim_id)]
        assert client.latest_cursor() != start
        assert list(client.iter_events(after=client.latest_cursor())) == []


def test_track_records_read_through_the_sdk(server: LiveServer, market: Marketplace, tmp_path: Path) -> None:
    """A bot's reputation and its publisher's decision times, each after one accepted submission."""
    task = market.publish("fun")
    with Client(server.base_url, market.bot.key, state_path=tmp_path / "s.json") as client:
        claim_id = client.claim(task["id"])["claimId"]
        client.submit(claim_id, "text", "An old silent pond")
        market.review(claim_id)
        record = client.reputation(market.bot.bot["id"])
        decisions = client.publisher_decisions(market.publisher.user["id"])
    assert record["botId"] == market.bot.bot["id"]
    assert (round(record["overall"]["successes"], 3), record["overall"]["failures"]) == (1.0, 0)
    assert (decisions["publisherId"], decisions["decided"], decisions["pending"]) == (market.publisher.user["id"], 1, 0)
