"""Verdicts that strangers cannot move, over HTTP: a model is named with its organisation, and a claim
is reproduced only by keyed submitters other than the claimant (docs/benchhub.md, "Identity" and
"Independence")."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.benchhub.helpers import anonymous, custom_benchmark, payload
from tests.support.api import Admin, client
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

CLAIM = {"value": 0.9, "sourceUrl": "https://example.org/card"}


def binary(successes: int, tasks: int) -> list[float]:
    return [float(index < successes) for index in range(tasks)]


def push(http: httpx.Client, slug: str, model: str, rewards: list[float], **fields: Any) -> dict[str, Any]:
    response = http.post("/v1/runs", json=payload(slug, model, rewards, **fields))
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()["run"]
    return run


def item_of(server: LiveServer, model: str, slug: str) -> dict[str, Any]:
    response = anonymous(server).get("/v1/bench/reproduced", params={"model": model})
    assert response.status_code == 200, response.text
    return next(item for item in response.json()["data"] if item["benchmark"] == slug)


def board_of(server: LiveServer, slug: str) -> dict[str, dict[str, Any]]:
    response = anonymous(server).get(f"/v1/bench/benchmarks/{slug}/leaderboard")
    assert response.status_code == 200, response.text
    return {entry["modelKey"]: entry for entry in response.json()["data"]}


def test_a_stranger_pushing_the_same_name_under_another_organisation_moves_nothing(
        server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin, size=1000, referenceScores=[
        {"model": "acme/calc-1", "value": 0.9, "sourceUrl": "https://example.org/acme", "date": "2026-01-01"}])
    slug = record["slug"]
    push(admin.account().http, slug, "acme/calc-1", binary(900, 1000))
    assert item_of(server, "acme/calc-1", slug)["status"] == "reproduced"

    evil = push(anonymous(server), slug, "evil/calc-1", binary(0, 1000))
    assert evil["modelKey"] == "evil/calc-1"

    acme = item_of(server, "acme/calc-1", slug)
    assert acme["status"] == "reproduced", acme["reason"]
    assert (acme["runs"], acme["measured"]["mean"], acme["measured"]["anonymousRuns"]) == (1, 0.9, 0)
    board = board_of(server, slug)
    assert set(board) == {"acme/calc-1", "evil/calc-1"}
    assert board["acme/calc-1"]["model"] == "acme/calc-1" and board["acme/calc-1"]["mean"] == 0.9
    assert board["evil/calc-1"]["model"] == "evil/calc-1"
    # The stranger has a model of its own, with no claim.
    assert item_of(server, "evil/calc-1", slug)["status"] == "runs_only"


def test_bare_names_and_snapshots_resolve_only_through_the_alias_table(server: LiveServer, admin: Admin) -> None:
    slug = custom_benchmark(admin)["slug"]
    operator = admin.account()
    snapshot = push(operator.http, slug, "claude-sonnet-4-5-20250929", [1.0, 0.0])
    qualified = push(operator.http, slug, "Anthropic/Claude-Sonnet-4.5", [1.0, 1.0])
    assert snapshot["modelKey"] == qualified["modelKey"] == "anthropic/claude-sonnet-4-5"
    # A vendor's snapshot under another organisation is that organisation's model.
    other = push(operator.http, slug, "evil/claude-sonnet-4-5-20250929", [0.0, 0.0])
    assert other["modelKey"] == "evil/claude-sonnet-4-5-20250929"
    # A bare name the table does not know is its own model, merged into no organisation's.
    push(operator.http, slug, "acme/calc-1", [1.0, 1.0])
    bare = push(operator.http, slug, "calc-1", [0.0, 0.0])
    assert bare["modelKey"] == "calc-1"

    board = board_of(server, slug)
    assert set(board) == {"anthropic/claude-sonnet-4-5", "evil/claude-sonnet-4-5-20250929", "acme/calc-1", "calc-1"}
    assert (board["anthropic/claude-sonnet-4-5"]["runs"], board["anthropic/claude-sonnet-4-5"]["mean"]) == (2, 0.75)
    assert (board["acme/calc-1"]["runs"], board["calc-1"]["runs"]) == (1, 1)
    answer = anonymous(server).get("/v1/bench/reproduced", params={"model": "claude-sonnet-4-5"}).json()
    assert answer["modelKey"] == "anthropic/claude-sonnet-4-5"
    assert next(item for item in answer["data"] if item["benchmark"] == slug)["runs"] == 2
    listed = anonymous(server).get("/v1/bench/runs", params={"benchmark": slug, "model": "calc-1"}).json()
    assert [run["id"] for run in listed["data"]] == [bare["id"]]


def test_a_claim_is_reproduced_only_by_keyed_submitters_other_than_the_claimant(
        server: LiveServer, admin: Admin) -> None:
    slug = custom_benchmark(admin, size=1000)["slug"]
    model = f"lab-{uuid.uuid4().hex[:8]}/model-1"
    claimant, reproducer = admin.account(), admin.account()

    # The claimant's own run agrees with its own claim: shown, never called reproduced.
    push(claimant.http, slug, model, binary(900, 1000), claim=CLAIM)
    own = item_of(server, model, slug)
    assert own["status"] == "self_reported", own["reason"]
    assert own["independent"] is False and own["claimant"] == {"kind": "user", "id": claimant.id}
    assert own["measured"]["basis"] == "claimant" and own["measured"]["mean"] == 0.9
    assert own["decision"]["extraTasksToDecide"] is None and own["submitters"] == 1
    # A second key of the same account is the same submitter.
    push(client(server.base_url, claimant.new_key(["runs:write"])), slug, model, binary(900, 1000))
    again = item_of(server, model, slug)
    assert (again["status"], again["submitters"], again["runs"]) == ("self_reported", 1, 2)
    gaps = anonymous(server).get("/v1/bench/reproduced", params={"model": model}).json()["gaps"]
    assert [gap["status"] for gap in gaps if gap["benchmark"] == slug] == ["self_reported"]

    # Another account's run decides it.
    push(reproducer.http, slug, model, binary(900, 1000))
    decided = item_of(server, model, slug)
    assert decided["status"] == "reproduced", decided["reason"]
    assert decided["independent"] is True and decided["claimant"] == {"kind": "user", "id": claimant.id}
    assert (decided["measured"]["basis"], decided["measured"]["runs"]) == ("independent", 1)
    assert decided["submitters"] == 2

    # The reproducer pushes again without a key: labelled and shown, but it neither moves the verdict
    # nor counts as one more submitter.
    push(anonymous(server), slug, model, binary(0, 1000))
    after = item_of(server, model, slug)
    assert after["status"] == "reproduced" and after["measured"]["mean"] == 0.9, after["reason"]
    assert after["submitters"] == 2 and after["runs"] == 4
    assert sorted(m["basis"] for m in after["otherMeasurements"]) == ["anonymous", "claimant"]
    [entry] = board_of(server, slug).values()
    assert (entry["submitters"], entry["anonymousRuns"]) == (2, 1)


def test_an_anonymous_claim_never_displaces_a_keyed_one(server: LiveServer, admin: Admin) -> None:
    slug = custom_benchmark(admin, size=1000)["slug"]
    model = f"lab-{uuid.uuid4().hex[:8]}/model-2"
    claimant, reproducer = admin.account(), admin.account()
    push(claimant.http, slug, model, [1.0], claim=CLAIM)
    push(reproducer.http, slug, model, binary(900, 1000))
    push(anonymous(server), slug, model, [0.0], claim={"value": 0.1, "sourceUrl": "https://example.org/other"})
    item = item_of(server, model, slug)
    assert item["claim"]["value"] == 0.9 and item["claimant"]["id"] == claimant.id
    assert item["status"] == "reproduced" and item["independent"] is True


@pytest.mark.parametrize("include", ["true", "false"])
def test_anonymous_runs_alone_never_decide_a_claim(server: LiveServer, admin: Admin, include: str) -> None:
    model = f"lab-{uuid.uuid4().hex[:8]}/model-3"
    slug = custom_benchmark(admin, size=1000, referenceScores=[
        {"model": model, "value": 0.9, "sourceUrl": "https://example.org/lab", "date": "2026-01-01"}])["slug"]
    push(anonymous(server), slug, model, binary(900, 1000))
    response = anonymous(server).get("/v1/bench/reproduced", params={"model": model, "includeAnonymous": include})
    item = next(item for item in response.json()["data"] if item["benchmark"] == slug)
    assert item["claimant"] == {"kind": "registry", "id": None} and item["independent"] is False
    if include == "true":
        assert item["status"] == "inconclusive" and "Only anonymous runs" in item["reason"]
        assert item["measured"]["basis"] == "anonymous" and item["decision"]["extraTasksToDecide"] is None
    else:
        assert item["status"] == "claim_only" and item["measured"] is None
