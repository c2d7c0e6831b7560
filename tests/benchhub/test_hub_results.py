"""Leaderboards and reproduced results over HTTP: decisions, provenance, pooling, conditional GETs."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.benchhub.helpers import anonymous, claim_by_another, custom_benchmark, payload, trial
from tests.support.api import Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process

CLAIM = {"value": 0.92, "sourceUrl": "https://example.org/claim"}


def binary(successes: int, tasks: int) -> list[float]:
    return [float(index < successes) for index in range(tasks)]


def item_of(server: LiveServer, model: str, slug: str, **params: Any) -> dict[str, Any]:
    response = anonymous(server).get("/v1/bench/reproduced", params={"model": model, **params})
    assert response.status_code == 200, response.text
    return next(item for item in response.json()["data"] if item["benchmark"] == slug)


@pytest.mark.parametrize(("successes", "tasks", "status"), [
    (3, 5, "inconclusive"), (5, 5, "inconclusive"), (280, 400, "discrepant"), (1207, 1319, "reproduced"),
])
def test_the_four_hand_computed_cases_against_gsm8k(server: LiveServer, admin: Admin, successes: int, tasks: int,
                                                    status: str) -> None:
    # gsm8k's registry tolerance is 0.02: the band is [0.90, 0.94] around the claim 0.92.
    model = f"case-{uuid.uuid4().hex[:8]}"
    claim_by_another(admin, "gsm8k", model, CLAIM)
    uploaded = admin.account().http.post("/v1/runs", json=payload("gsm8k", model, binary(successes, tasks)))
    assert uploaded.status_code == 200, uploaded.text
    item = item_of(server, model, "gsm8k")
    assert item["status"] == status, item["reason"]
    assert item["decision"]["band"] == {"low": pytest.approx(0.90), "high": pytest.approx(0.94)}
    measured = item["measured"]
    assert measured["mean"] == pytest.approx(successes / tasks)
    assert measured["coverage"] == {"tasks": tasks, "size": 1319, "fraction": pytest.approx(tasks / 1319)}
    for interval in (measured["ci95"], measured["ci90"]):
        assert 0.0 <= interval["low"] <= interval["high"] <= 1.0
    if status == "inconclusive":
        assert item["decision"]["extraTasksToDecide"] == {3: 2, 5: 36}[successes]
    else:
        assert item["decision"]["extraTasksToDecide"] is None


def test_the_model_page_says_how_many_more_tasks_would_decide(server: LiveServer, admin: Admin) -> None:
    model = f"page-{uuid.uuid4().hex[:8]}"
    claim_by_another(admin, "gsm8k", model, CLAIM)
    admin.account().http.post("/v1/runs", json=payload("gsm8k", model, binary(3, 5)))
    page = anonymous(server).get(f"/benchhub/models/{model}")
    assert page.status_code == 200
    assert 'data-extra-tasks="2"' in page.text and "about 2 more tasks would decide it" in page.text


def test_reproduced_reports_every_status_and_the_gaps(server: LiveServer, admin: Admin) -> None:
    operator, other = admin.account(), admin.account()
    model = f"lab-{uuid.uuid4().hex[:8]}/model"
    claimed = custom_benchmark(admin, referenceScores=[
        {"model": model, "value": 0.8, "sourceUrl": "https://example.org/card", "date": "2025-06-01"}])
    close, far, thin, unclaimed = (custom_benchmark(admin, size=1319) for _ in range(4))
    for record in (close, far, thin):
        claim_by_another(admin, record["slug"], model, CLAIM)
    rewards = binary(1207, 1319)
    # Two submitters' runs of the same agent and revision pool by task (the name's spelling folded).
    operator.http.post("/v1/runs", json=payload(close["slug"], model, trials=[
        trial(f"task-{i}", value) for i, value in enumerate(rewards[:600])]))
    other.http.post("/v1/runs", json=payload(close["slug"], model.title(), trials=[
        trial(f"task-{i}", value) for i, value in enumerate(rewards) if i >= 600]))
    operator.http.post("/v1/runs", json=payload(far["slug"], model, binary(280, 400)))
    operator.http.post("/v1/runs", json=payload(thin["slug"], model, binary(3, 5)))
    operator.http.post("/v1/runs", json=payload(unclaimed["slug"], model, binary(5, 10)))

    response = anonymous(server).get("/v1/bench/reproduced", params={"model": model.upper()})
    answer = response.json()
    assert answer["modelKey"] == model and "TOST" in answer["toleranceRule"]
    items = {item["benchmark"]: item for item in answer["data"]}
    statuses = {slug: items[slug]["status"] for slug in
                (claimed["slug"], close["slug"], far["slug"], thin["slug"], unclaimed["slug"], "gsm8k", "humaneval")}
    assert statuses == {
        claimed["slug"]: "claim_only", close["slug"]: "reproduced", far["slug"]: "discrepant",
        thin["slug"]: "inconclusive", unclaimed["slug"]: "runs_only", "gsm8k": "gap", "humaneval": "not_reproducible",
    }
    reproduced = items[close["slug"]]
    assert reproduced["runs"] == 3 and reproduced["submitters"] == 3 and reproduced["measured"]["runs"] == 2
    assert reproduced["measured"]["nTasks"] == 1319 and reproduced["measured"]["mean"] == pytest.approx(1207 / 1319)
    assert reproduced["delta"] == pytest.approx(1207 / 1319 - 0.92)
    assert reproduced["claim"] == {"value": 0.92, "sourceUrl": CLAIM["sourceUrl"],
                                   "date": reproduced["claim"]["date"], "stderr": None, "origin": "run"}
    assert items[claimed["slug"]]["claim"]["origin"] == "registry" and items[claimed["slug"]]["runs"] == 0

    gaps = {gap["benchmark"]: gap for gap in answer["gaps"]}
    assert answer["gaps"][0]["status"] == "claim_only"
    assert gaps[claimed["slug"]]["command"] == (
        f"bountyboard bench pull {claimed['slug']} --n 200 && bountyboard bench run ./{claimed['slug']} "
        f"-a <agent> -m {model.upper()} && bountyboard bench push ./jobs")
    assert gaps["terminal-bench"]["command"].startswith(
        "bountyboard bench run terminal-bench@2.0 --benchmark terminal-bench -a <agent> -m ")
    assert thin["slug"] in gaps and "gsm8k" in gaps
    assert "humaneval" not in gaps and close["slug"] not in gaps and unclaimed["slug"] not in gaps
    assert sum(answer["summary"].values()) == len(answer["data"])


def test_every_trial_errored_scores_zero_as_in_harbor(server: LiveServer, admin: Admin) -> None:
    model = f"crashy-{uuid.uuid4().hex[:8]}"
    record = custom_benchmark(admin)
    claim_by_another(admin, record["slug"], model, {"value": 0.5, "sourceUrl": "https://example.org"})
    admin.account().http.post("/v1/runs", json=payload(record["slug"], model, trials=[
        trial("a", None, error="Timeout"), trial("b", None, error="Timeout")]))
    item = item_of(server, model, record["slug"])
    assert item["status"] == "inconclusive"
    assert item["measured"]["mean"] == 0.0 and item["measured"]["nErrors"] == 2


def upload(admin: Admin, slug: str, model: str, rewards: list[float], *, agent: str = "terminus-2",
           revision: str | None = "main", anonymous_server: LiveServer | None = None) -> dict[str, Any]:
    body = payload(slug, model, rewards, agent=agent)
    body["dataset"]["revision"] = revision
    http = anonymous(anonymous_server) if anonymous_server else admin.account().http
    response = http.post("/v1/runs", json=body)
    assert response.status_code == 200, response.text
    return response.json()["run"]


def test_leaderboard_entries_are_model_agent_pairs_with_calibration_apart(server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin, size=40)
    slug, suffix = record["slug"], uuid.uuid4().hex[:6]
    strong, weak = f"strong-{suffix}", f"weak-{suffix}"
    upload(admin, slug, strong, [1.0, 1.0, 0.0])
    upload(admin, slug, strong.upper(), [1.0, 1.0, 1.0])  # same pair, spelled otherwise: pooled by task
    upload(admin, slug, strong, [0.0, 0.0, 0.0, 0.0], agent="other-agent")  # another agent: never pooled
    upload(admin, slug, weak, [0.0, 0.0, 1.0])
    upload(admin, slug, weak, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0], revision="v2")  # another revision: never pooled
    run = upload(admin, slug, "oracle-check", [1.0, 1.0], agent="oracle")
    assert run["calibration"] is True
    upload(admin, slug, "nop-check", [0.0], agent="nop")

    board = anonymous(server).get(f"/v1/bench/benchmarks/{slug}/leaderboard").json()
    # Three task sets (strong: tasks 0-2 of main; weak: 0-5 of v2; other-agent: 0-3 of main), so nobody is
    # ranked against anybody: each is first of its own set, the sets with the most tasks first.
    rows = [(e["rank"], e["modelKey"], e["agent"], e["runs"], e["taskSet"]["tasks"]) for e in board["data"]]
    assert rows == [(1, weak, "terminus-2", 1, 6), (1, strong, "other-agent", 1, 4), (1, strong, "terminus-2", 2, 3)]
    # strong with terminus-2: task-0 = 1, task-1 = 1, task-2 = (0 + 1) / 2 -> 5 of 6 trials.
    assert board["data"][2]["mean"] == pytest.approx(5 / 6)
    head = board["data"][0]
    assert head["datasetRevisions"] == ["main", "v2"] and head["datasetRevision"] == "v2"
    assert head["mean"] == pytest.approx(1 / 6) and head["coverage"] == {"tasks": 6, "size": 40, "fraction": 0.15}
    checks = [(e["rank"], e["agent"], e["calibration"]) for e in board["harnessChecks"]]
    assert sorted(checks) == [(None, "nop", True), (None, "oracle", True)]
    assert board["size"] == 40 and board["includeAnonymous"] is True
    page = anonymous(server).get(f"/benchhub/{slug}").text
    measured, _, checks_section = page.partition("Harness check")
    assert "oracle" in checks_section and "nop" in checks_section and "other-agent" in measured
    assert "main, v2" in measured and "6 / 40" in measured


def test_anonymous_runs_are_labelled_and_can_be_left_out(server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin)
    slug, model = record["slug"], f"anon-{uuid.uuid4().hex[:6]}"
    upload(admin, slug, model, [1.0, 1.0])
    upload(admin, slug, model, [0.0, 0.0, 0.0, 0.0], anonymous_server=server)
    http = anonymous(server)
    board = http.get(f"/v1/bench/benchmarks/{slug}/leaderboard").json()
    [entry] = board["data"]
    assert (entry["runs"], entry["anonymousRuns"], entry["mean"]) == (2, 1, pytest.approx(2 / 6))
    named = http.get(f"/v1/bench/benchmarks/{slug}/leaderboard", params={"includeAnonymous": "false"}).json()
    [entry] = named["data"]
    assert (entry["runs"], entry["anonymousRuns"], entry["mean"]) == (1, 0, 1.0)
    assert item_of(server, model, slug, includeAnonymous="false")["measured"]["runs"] == 1
    page = http.get(f"/benchhub/{slug}").text
    assert "anonymous (1/2)" in page and 'name="anonymous"' in page
    assert "anonymous (1/2)" not in http.get(f"/benchhub/{slug}", params={"anonymous": "hide"}).text


@pytest.mark.parametrize("path", ["leaderboard", "reproduced"])
def test_hub_reads_answer_304_until_something_changes(server: LiveServer, admin: Admin, path: str) -> None:
    record = custom_benchmark(admin)
    model = f"etag-{uuid.uuid4().hex[:6]}"
    upload(admin, record["slug"], model, [1.0])
    url, params = ((f"/v1/bench/benchmarks/{record['slug']}/leaderboard", {}) if path == "leaderboard"
                   else ("/v1/bench/reproduced", {"model": model}))
    http = anonymous(server)
    first = http.get(url, params=params)
    etag = first.headers["etag"]
    again = http.get(url, params=params, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    filtered = http.get(url, params={**params, "includeAnonymous": "false"}, headers={"If-None-Match": etag})
    assert filtered.status_code == 200, "another query is another answer"
    upload(admin, record["slug"], model, [0.0])
    changed = http.get(url, params=params, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag


def test_concurrent_uploads_into_one_pool_are_all_counted(server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin)
    model = f"race-{uuid.uuid4().hex[:6]}"
    accounts = [admin.account() for _ in range(8)]
    bodies = [payload(record["slug"], model, [float(i % 2), 1.0, 0.0]) for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda pair: pair[0].http.post("/v1/runs", json=pair[1]).status_code,
                                 zip(accounts, bodies, strict=True)))
    assert statuses == [200] * 8
    [entry] = anonymous(server).get(f"/v1/bench/benchmarks/{record['slug']}/leaderboard").json()["data"]
    # Runs 0..7: task-0 is 1 for the odd ones (4 of 8), task-1 always 1, task-2 always 0: 12 of 24.
    assert (entry["runs"], entry["submitters"], entry["nTrials"], entry["nTasks"]) == (8, 8, 24, 3)
    assert entry["mean"] == 0.5
