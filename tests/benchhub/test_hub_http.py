"""The benchmark hub over HTTP, on a live server (SQLite and PostgreSQL)."""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from typing import Any

import httpx
import pytest

from bountyboard.benchhub import registry, search
from tests.benchhub.helpers import anonymous, custom_benchmark, payload, trial
from tests.support.api import Account, Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

# Registry ------------------------------------------------------------------------------------------


def test_index_json_has_etag_caching_and_answers_304(server: LiveServer) -> None:
    http = anonymous(server)
    response = http.get("/benchhub/index.json")
    assert response.status_code == 200
    body = response.json()
    assert body["schemaVersion"] == "1.0" and body["generatedAt"].endswith("Z")
    assert len(body["records"]) >= 25
    assert body["sha256"] == hashlib.sha256(registry.canonical_json({"records": body["records"]})).hexdigest()
    assert response.headers["etag"] == f'"{body["sha256"]}"'
    assert "max-age" in response.headers["cache-control"]
    again = http.get("/benchhub/index.json", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == response.headers["etag"]
    stale = http.get("/benchhub/index.json", headers={"If-None-Match": '"0000"'})
    assert stale.status_code == 200


def test_index_changes_when_an_admin_adds_a_record(server: LiveServer, admin: Admin) -> None:
    http = anonymous(server)
    before = http.get("/benchhub/index.json").headers["etag"]
    record = custom_benchmark(admin)
    after = http.get("/benchhub/index.json", headers={"If-None-Match": before})
    assert after.status_code == 200
    assert record["slug"] in {r["slug"] for r in after.json()["records"]}
    detail = http.get(f"/v1/bench/benchmarks/{record['slug']}")
    assert detail.status_code == 200 and detail.json() == record


def test_search_and_detail(server: LiveServer) -> None:
    http = anonymous(server)
    found = http.get("/v1/bench/benchmarks", params={"q": "ARC-Challenge", "pageSize": 100}).json()
    # Both words are in arc-challenge's slug; arc-easy (and records other tests copied from it) has
    # "challenge" only in its description.
    slugs = [r["slug"] for r in found["data"]]
    shipped = {r["slug"] for r in registry.shipped_records()}
    assert slugs[0] == "arc-challenge" and [slug for slug in slugs if slug in shipped] == ["arc-challenge", "arc-easy"]
    assert found["total"] == len(slugs) and found["hasMore"] is False
    harbor = http.get("/v1/bench/benchmarks", params={"kind": "harbor_native", "pageSize": 100}).json()
    assert harbor["total"] >= 10 and all(r["harbor"]["adapter"]["kind"] == "harbor_native" for r in harbor["data"])
    gsm8k = http.get("/v1/bench/benchmarks/gsm8k").json()
    assert gsm8k["harbor"]["adapter"]["dataset"] == "openai/gsm8k"
    assert gsm8k["harbor"]["adapter"]["fields"]["id"] is None
    missing = http.get("/v1/bench/benchmarks/no-such-benchmark")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_search_matches_whole_words_and_ranks_them_before_word_starts(server: LiveServer, admin: Admin) -> None:
    http = anonymous(server)
    swe = http.get("/v1/bench/benchmarks", params={"q": "swe", "pageSize": 100}).json()
    # "swe" is inside "answer" in many descriptions; only records with the word (or a word starting
    # with it) answer.
    assert swe["data"] and all(any(word.startswith("swe") for word in search.words(search.searchable_text(r)))
                               for r in swe["data"]), [r["slug"] for r in swe["data"]]
    assert {r["slug"] for r in swe["data"]} >= {"swe-bench-verified", "swe-bench-lite", "swe-bench-pro"}
    assert not {"gsm8k", "boolq", "arithmetic"} & {r["slug"] for r in swe["data"]}

    token, suffix = f"zq{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    # Slugs chosen so that the order by slug is the reverse of the rank.
    starts = custom_benchmark(admin, slug=f"test-a-{suffix}", description=f"Has {token}ian only as a word start.")
    whole = custom_benchmark(admin, slug=f"test-b-{suffix}", description=f"Has {token} as a whole word.")
    custom_benchmark(admin, slug=f"test-c-{suffix}", description=f"Has x{token} only inside a word.")
    ranked = http.get("/v1/bench/benchmarks", params={"q": token.upper()}).json()
    assert [r["slug"] for r in ranked["data"]] == [whole["slug"], starts["slug"]] and ranked["total"] == 2


def test_admin_upsert_updates_validates_and_needs_admin(server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin)
    record["description"] = "Updated description."
    updated = admin.http.put(f"/v1/admin/bench/benchmarks/{record['slug']}", json=record)
    assert updated.status_code == 200 and updated.json()["description"] == "Updated description."
    shown = anonymous(server).get(f"/v1/bench/benchmarks/{record['slug']}").json()
    assert shown["description"] == "Updated description."

    broken = copy.deepcopy(record)
    broken["referenceScores"] = [{"model": "m", "value": 1.5, "sourceUrl": "https://example.org", "date": "2025-01-01"}]
    refused = admin.http.put(f"/v1/admin/bench/benchmarks/{record['slug']}", json=broken)
    assert refused.status_code == 422 and refused.json()["code"] == "invalid_benchmark"
    mismatch = admin.http.put("/v1/admin/bench/benchmarks/another-slug", json=record)
    assert mismatch.status_code == 422

    operator = admin.account()
    forbidden = operator.http.put(f"/v1/admin/bench/benchmarks/{record['slug']}", json=record)
    assert forbidden.status_code == 403
    unauthenticated = anonymous(server).put(f"/v1/admin/bench/benchmarks/{record['slug']}", json=record)
    assert unauthenticated.status_code == 401


# Uploads -------------------------------------------------------------------------------------------


def test_an_empty_reward_is_counted_like_harbor(admin: Admin) -> None:
    """A verifier that wrote reward.json = {} (Harbor: rewards {}, no exception): accepted without an
    error, counted in nTrials and as 0, no error, and no pass@k for the run, as Harbor counts it."""
    operator = admin.account()
    body = payload("gsm8k", f"model-{uuid.uuid4().hex[:8]}", trials=[
        trial("a", None, rewards={}), trial("a", 1.0, attempt=1), trial("b", 1.0), trial("b", 0.0, attempt=1),
    ])
    answer = operator.http.post("/v1/runs", json=body)
    assert answer.status_code == 200, answer.text
    run = answer.json()["run"]
    assert (run["score"], run["nTrials"], run["nTrialsTotal"], run["nErrors"]) == (0.5, 4, 4, 0)
    assert run["passAtK"] == {}
    stored = operator.http.get(f"/v1/bench/runs/{run['id']}").json()
    assert stored["trials"][0]["rewards"] == {} and stored["trials"][0].get("error") is None


def test_keyed_upload_counts_like_harbor_and_answers_duplicates(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    body = payload("gsm8k", f"model-{uuid.uuid4().hex[:8]}", trials=[
        trial("a", 1.0), trial("a", 0.0, attempt=1), trial("b", 1.0), trial("c", None, error="Timeout"),
    ])
    first = operator.http.post("/v1/runs", json=body)
    assert first.status_code == 200, first.text
    assert first.json()["duplicate"] is False
    run = first.json()["run"]
    # Harbor's mean over every trial, the errored one counting 0: (1 + 0 + 1 + 0) / 4.
    assert run["score"] == 0.5 and run["metrics"] == {"reward": 0.5} and run["primaryMetric"] == "reward"
    # nTrials is Harbor's n_trials: the trials with rewards; every trial is in nTrialsTotal.
    assert (run["nTasks"], run["nTrials"], run["nTrialsTotal"], run["nErrors"]) == (3, 3, 4, 1)
    assert run["passAtK"] == {}
    assert run["submitter"] == {"id": operator.id, "kind": "user", "displayName": operator.user["displayName"]}
    assert run["retracted"] is False and run["id"].startswith("run_") and run["calibration"] is False
    assert first.headers["ratelimit-policy"] == '"runs-user";q=200;w=86400'

    again = operator.http.post("/v1/runs", json=body)
    assert again.status_code == 200
    assert again.json()["duplicate"] is True and again.json()["run"]["id"] == run["id"]
    listed = operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()
    assert listed["total"] == 1

    detail = anonymous(server).get(f"/v1/bench/runs/{run['id']}")
    assert detail.status_code == 200
    assert [t["trialName"] for t in detail.json()["trials"]] == [t["trialName"] for t in body["trials"]]


def test_errored_trials_may_carry_no_rewards_at_all(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    absent = trial("b", None, error="AgentTimeoutError")
    absent.pop("rewards")
    body = payload("gsm8k", f"model-{uuid.uuid4().hex[:8]}", trials=[
        trial("a", 1.0), absent, {**trial("c", None, error="Crash"), "rewards": None}])
    response = operator.http.post("/v1/runs", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["run"]["score"] == pytest.approx(1 / 3) and response.json()["run"]["nErrors"] == 2


def test_every_reward_key_is_kept_and_the_primary_one_is_chosen(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    model = f"keys-{uuid.uuid4().hex[:8]}"
    several = [trial("a", None, rewards={"accuracy": 1.0, "latency_ok": 0.0}),
               trial("b", None, rewards={"accuracy": 0.0}), trial("c", None, error="Crash")]
    run = operator.http.post("/v1/runs", json=payload("gsm8k", model, trials=several)).json()["run"]
    # gsm8k's metric is `accuracy` and the trials carry it; latency_ok is 0 where missing.
    assert run["primaryMetric"] == "accuracy" and run["score"] == pytest.approx(1 / 3)
    assert run["metrics"] == {"accuracy": pytest.approx(1 / 3), "latency_ok": 0.0}

    chosen = operator.http.post("/v1/runs", json={**payload("gsm8k", model, trials=several),
                                                   "primaryMetric": "latency_ok"}).json()["run"]
    assert chosen["primaryMetric"] == "latency_ok" and chosen["score"] == 0.0

    ambiguous = payload("gsm8k", model, trials=[trial("a", None, rewards={"x": 1.0, "y": 0.0})])
    refused = operator.http.post("/v1/runs", json=ambiguous)
    assert refused.status_code == 422 and refused.json()["code"] == "ambiguous_metric"
    assert "--metric" in refused.json()["detail"]
    unknown = operator.http.post("/v1/runs", json={**payload("gsm8k", model, [1.0]), "primaryMetric": "speed"})
    assert unknown.status_code == 422 and unknown.json()["code"] == "ambiguous_metric"
    accepted = operator.http.post("/v1/runs", json={**ambiguous, "primaryMetric": "y"})
    assert accepted.status_code == 200 and accepted.json()["run"]["score"] == 0.0


def test_pass_at_k_and_provenance_are_stored(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    # Task a: 1 of 2 attempts pass -> pass@2 = 1; task b: 0 of 2 -> 0; mean 0.5.
    body = payload("gsm8k", f"prov-{uuid.uuid4().hex[:8]}", trials=[
        trial("a", 1.0), trial("a", 0.0, attempt=1), trial("b", 0.0), trial("b", 0.0, attempt=1)])
    body["dataset"] = {"ref": "openai/gsm8k", "revision": "e53f048", "seed": 7, "rowIds": ["a", "b"]}
    run = operator.http.post("/v1/runs", json=body).json()["run"]
    assert run["passAtK"] == {"2": 0.5}
    assert run["dataset"] == {"ref": "openai/gsm8k", "revision": "e53f048", "seed": 7, "rowIds": ["a", "b"]}
    assert anonymous(server).get(f"/v1/bench/runs/{run['id']}").json()["dataset"]["seed"] == 7


def test_bot_keys_upload_for_their_operator_and_need_runs_write(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    bot = operator.bot()
    uploaded = bot.http.post("/v1/runs", json=payload())
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["run"]["submitter"]["id"] == operator.id

    read_only = operator.new_key(["profile:read"])
    refused = httpx.post(server.base_url + "/v1/runs", json=payload(), headers={"Authorization": f"Bearer {read_only}"})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"
    assert refused.json()["requiredScopes"] == ["runs:write"]
    bad_key = httpx.post(server.base_url + "/v1/runs", json=payload(), headers={"Authorization": "Bearer svc-nope"})
    assert bad_key.status_code == 401
    assert operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()["total"] == 1


def test_anonymous_upload_is_attributed_to_a_hashed_address(server: LiveServer) -> None:
    response = anonymous(server).post("/v1/runs", json=payload())
    assert response.status_code == 200, response.text
    submitter = response.json()["run"]["submitter"]
    assert submitter["kind"] == "anonymous" and submitter["id"].startswith("anon_")
    assert "127.0.0.1" not in response.text
    assert response.headers["ratelimit-policy"] == '"runs-ip";q=30;w=86400'


def _malformed() -> list[tuple[str, Any]]:
    def edit(change: Any) -> dict[str, Any]:
        body = payload()
        change(body)
        return body

    return [
        ("empty trials", edit(lambda b: b.update(trials=[]))),
        ("unknown field", edit(lambda b: b.update(score=1.0))),
        ("missing model", edit(lambda b: b.pop("model"))),
        ("empty model", edit(lambda b: b.update(model=""))),
        ("bad slug", edit(lambda b: b.update(benchmark="GSM 8K"))),
        ("bad sha", edit(lambda b: b.update(bundleSha256="abc"))),
        ("string reward", edit(lambda b: b["trials"][0]["rewards"].update(reward="1"))),
        ("boolean reward", edit(lambda b: b["trials"][0]["rewards"].update(reward=True))),
        ("no reward and no error", edit(lambda b: b["trials"][0].update(rewards=None, error=None))),
        ("blank reward key", edit(lambda b: b["trials"][0].update(rewards={"": 1.0}))),
        ("seed not an integer", edit(lambda b: b["dataset"].update(seed="7"))),
        ("empty row id", edit(lambda b: b["dataset"].update(rowIds=[""]))),
        ("duplicate trial names", edit(lambda b: b["trials"][1].update(trialName=b["trials"][0]["trialName"]))),
        ("negative tokens", edit(lambda b: b["trials"][0].update(tokens={"input": -1, "output": 0}))),
        ("negative cost", edit(lambda b: b["trials"][0].update(costUsd=-0.5))),
        ("finished before started", edit(lambda b: b["trials"][0].update(finishedAt="2026-10-01T00:00:00Z"))),
        ("claim without source", edit(lambda b: b.update(claim={"value": 0.5}))),
        ("trials not a list", edit(lambda b: b.update(trials={"taskId": "x"}))),
        ("body not an object", ["not", "an", "object"]),
    ]


@pytest.fixture(scope="module")
def refused_uploader(server: LiveServer, admin: Admin) -> Account:
    """One account for every refused upload: none of them may leave a run behind."""
    return admin.account()


@pytest.mark.parametrize(("case", "body"), _malformed(), ids=[case for case, _ in _malformed()])
def test_malformed_payloads_are_refused_and_nothing_is_stored(refused_uploader: Account, case: str,
                                                               body: Any) -> None:
    operator = refused_uploader
    response = operator.http.post("/v1/runs", json=body)
    assert response.status_code == 422, f"{case}: {response.text}"
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert problem["code"] == "validation_failed" and problem["errors"]
    assert operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()["total"] == 0


def test_non_finite_rewards_are_refused(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    text = json.dumps(payload(rewards=[1.0, 0.0])).replace("0.0", "NaN", 1)
    assert "NaN" in text
    response = operator.http.post("/v1/runs", content=text, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()["total"] == 0


@pytest.mark.parametrize(("case", "body", "code", "field"), [
    ("unknown slug", payload("no-such-benchmark"), "unknown_benchmark", "benchmark"),
    ("reward above max", payload(rewards=[1.0, 1.5]), "impossible_score", "trials.1.rewards.reward"),
    ("reward below min", payload(rewards=[-0.1]), "impossible_score", "trials.0.rewards.reward"),
    ("ambiguous rewards", payload(trials=[trial("a", None, rewards={"a": 1.0, "b": 0.0})]), "ambiguous_metric",
     "primaryMetric"),
    ("claim above max", payload(claim={"value": 92.0, "sourceUrl": "https://example.org"}), "impossible_score",
     "claim.value"),
])
def test_uploads_are_checked_against_the_registry(refused_uploader: Account, case: str, body: dict[str, Any],
                                                  code: str, field: str) -> None:
    operator = refused_uploader
    body = {**body, "bundleSha256": hashlib.sha256(uuid.uuid4().bytes).hexdigest()}
    response = operator.http.post("/v1/runs", json=body)
    assert response.status_code == 422, f"{case}: {response.text}"
    assert response.json()["code"] == code
    assert [error["field"] for error in response.json()["errors"]] == [field]
    assert operator.http.get("/v1/bench/runs", params={"submitter": operator.id}).json()["total"] == 0


# Runs, retraction, leaderboard ---------------------------------------------------------------------


def test_run_list_filters_and_detail(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    model = f"Org/Filter-Model-{uuid.uuid4().hex[:6]}"
    record = custom_benchmark(admin)
    ids = [operator.http.post("/v1/runs", json=payload(record["slug"], model, [1.0, 0.0])).json()["run"]["id"]
           for _ in range(3)]
    operator.http.post("/v1/runs", json=payload("gsm8k", model, [1.0]))
    http = anonymous(server)
    by_benchmark = http.get("/v1/bench/runs", params={"benchmark": record["slug"], "pageSize": 2}).json()
    assert by_benchmark["total"] == 3 and by_benchmark["hasMore"] is True
    assert [run["id"] for run in by_benchmark["data"]] == ids[::-1][:2]
    by_key = http.get("/v1/bench/runs", params={"model": model.lower().replace("-", " ")}).json()
    assert by_key["total"] == 4
    assert http.get("/v1/bench/runs", params={"model": model.split("/")[1]}).json()["total"] == 0, \
        "without its organisation it is another model"
    assert http.get("/v1/bench/runs", params={"submitter": operator.id, "benchmark": "gsm8k"}).json()["total"] == 1
    assert http.get("/v1/bench/runs/run_doesnotexist").status_code == 404


def test_admin_retracts_with_a_visible_reason(server: LiveServer, admin: Admin) -> None:
    operator = admin.account()
    record = custom_benchmark(admin)
    model = f"retract-{uuid.uuid4().hex[:6]}"
    good = operator.http.post("/v1/runs", json=payload(record["slug"], model, [1.0, 0.0])).json()["run"]
    bad = operator.http.post("/v1/runs", json=payload(record["slug"], model, [1.0, 1.0])).json()["run"]

    too_short = admin.http.post(f"/v1/admin/bench/runs/{bad['id']}/retract", json={"reason": "no"})
    assert too_short.status_code == 422
    refused = operator.http.post(f"/v1/admin/bench/runs/{bad['id']}/retract", json={"reason": "Leaked answers."})
    assert refused.status_code == 403
    retracted = admin.http.post(f"/v1/admin/bench/runs/{bad['id']}/retract", json={"reason": "Leaked answers."})
    assert retracted.status_code == 200, retracted.text
    assert retracted.json()["retracted"] is True
    assert retracted.json()["retraction"]["reason"] == "Leaked answers."
    shown = anonymous(server).get(f"/v1/bench/runs/{bad['id']}").json()
    assert shown["retracted"] is True and shown["retraction"]["reason"] == "Leaked answers."
    assert shown["score"] == 1.0, "a retracted run is kept as it was uploaded"
    twice = admin.http.post(f"/v1/admin/bench/runs/{bad['id']}/retract", json={"reason": "Again."})
    assert twice.status_code == 409 and twice.json()["code"] == "already_retracted"
    assert admin.http.post("/v1/admin/bench/runs/run_nope/retract", json={"reason": "Gone."}).status_code == 404

    board = anonymous(server).get(f"/v1/bench/benchmarks/{record['slug']}/leaderboard").json()
    assert [(e["modelKey"], e["mean"], e["runs"]) for e in board["data"]] == [(model, 0.5, 1)]
    only_retracted = anonymous(server).get("/v1/bench/runs", params={"benchmark": record["slug"], "retracted": True})
    assert [run["id"] for run in only_retracted.json()["data"]] == [bad["id"]]
    assert good["id"] != bad["id"]


def test_reproduced_uses_registry_claims_through_aliases(server: LiveServer) -> None:
    answer = anonymous(server).get("/v1/bench/reproduced", params={"model": "anthropic/claude-sonnet-4-5-20250929"})
    item = next(i for i in answer.json()["data"] if i["benchmark"] == "swe-bench-verified")
    assert item["claim"]["value"] == 0.772 and item["claim"]["origin"] == "registry"
    assert anonymous(server).get("/v1/bench/reproduced").status_code == 422
