"""Small samples, significance-aware ranks and paired comparisons, over HTTP.

Expected figures are computed by hand (the arithmetic is in the comments and in docs/benchhub.md) or
with scipy's own tests, never with the hub's code.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from scipy import stats as scipy_stats

from tests.benchhub.helpers import anonymous, custom_benchmark, payload, trial
from tests.support.api import Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.in_process


def upload(admin: Admin, slug: str, model: str, rewards: list[float], *, first_task: int = 0,
           agent: str = "terminus-2") -> None:
    """One attempt per task, tasks `task-<first_task>`, ... , uploaded by a fresh account."""
    trials = [trial(f"task-{first_task + index}", value) for index, value in enumerate(rewards)]
    response = admin.account().http.post("/v1/runs", json=payload(slug, model, trials=trials, agent=agent))
    assert response.status_code == 200, response.text


def board_of(server: LiveServer, slug: str) -> dict[str, dict[str, Any]]:
    response = anonymous(server).get(f"/v1/bench/benchmarks/{slug}/leaderboard")
    assert response.status_code == 200, response.text
    return {entry["modelKey"]: entry for entry in response.json()["data"]}


# Item 3: small samples with rewards that are not one pass/fail attempt per task --------------------


@pytest.mark.parametrize(("rewards", "claim"), [
    # t(3) against the band's lower edge 0.90: t = (0.90 - 0.6125) / 0.1586 = 1.81, one-sided p = 0.084;
    # a sign-flip test of 4 tasks cannot go below 1/16 on one side. The old rule said discrepant.
    ([0.25, 0.7, 1.0, 0.5], 0.95),
    # TOST with t(3): t = 0.05 / 0.0245 = 2.04, p = 0.067. The old rule said reproduced.
    ([0.64, 0.76, 0.70, 0.70], 0.70),
])
def test_four_tasks_of_varying_rewards_decide_nothing(server: LiveServer, admin: Admin, rewards: list[float],
                                                      claim: float) -> None:
    model = f"lab/varied-{uuid.uuid4().hex[:8]}"
    # The claim is the registry's (a published score); the run comes from an account with no claim.
    record = custom_benchmark(admin, tolerance={"abs": 0.05}, referenceScores=[
        {"model": model, "value": claim, "sourceUrl": "https://example.org/card", "date": "2026-01-01"}])
    upload(admin, record["slug"], model, rewards)
    response = anonymous(server).get("/v1/bench/reproduced", params={"model": model})
    item = next(item for item in response.json()["data"] if item["benchmark"] == record["slug"])
    assert item["claim"]["origin"] == "registry"
    assert item["status"] == "inconclusive", item["reason"]
    assert "Too few tasks" in item["reason"]
    measured = item["measured"]
    assert measured["mean"] == pytest.approx(sum(rewards) / 4)
    # Four tasks justify no 90% or 95% statement without assuming a shape for the task scores.
    assert measured["ci90"] == {"low": 0.0, "high": 1.0} and measured["ci95"] == {"low": 0.0, "high": 1.0}
    assert item["decision"]["extraTasksToDecide"] is not None


# Item 4: ranks the data can order ---------------------------------------------------------------------


def test_identical_data_share_a_rank(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    rewards = [1.0] * 20 + [0.0] * 10
    upload(admin, slug, f"twin-a-{suffix}", rewards)
    upload(admin, slug, f"twin-b-{suffix}", rewards)
    upload(admin, slug, f"floor-{suffix}", [0.0] * 30)  # 0/30: 95% interval [0, 0.08], below the twins'
    board = board_of(server, slug)
    twins = [board[f"twin-a-{suffix}"], board[f"twin-b-{suffix}"]]
    assert [(e["rank"], e["rankRange"]) for e in twins] == [(1, {"best": 1, "worst": 2})] * 2
    assert board[f"floor-{suffix}"]["rank"] == 3 and board[f"floor-{suffix}"]["rankRange"] == {"best": 3, "worst": 3}
    assert len({entry["taskSet"]["id"] for entry in board.values()}) == 1


def test_twelve_overlapping_entries_share_rank_one(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    passes = [3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]
    # Jeffreys 95% intervals on n* = 9 (10 single pass/fail tasks): 3/10 reaches up to Beta(3.2, 6.8)'s 97.5%
    # point (0.62) and 8/10 down to Beta(7.7, 2.3)'s 2.5% point (0.48); they overlap, so every pair does.
    assert scipy_stats.beta.ppf(0.975, 3.2, 6.8) > scipy_stats.beta.ppf(0.025, 7.7, 2.3)
    for index, count in enumerate(passes):
        upload(admin, slug, f"m{index:02d}-{suffix}", [1.0] * count + [0.0] * (10 - count))
    board = board_of(server, slug)
    assert len(board) == 12
    assert {(e["rank"], e["rankRange"]["best"], e["rankRange"]["worst"]) for e in board.values()} == {(1, 1, 12)}
    assert {e["taskSet"]["tasks"] for e in board.values()} == {10}


def test_disjoint_task_sets_are_not_ranked_together(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    upload(admin, slug, f"high-{suffix}", [1.0] * 20)
    upload(admin, slug, f"low-{suffix}", [0.0] * 20)  # the same tasks, surely below
    upload(admin, slug, f"elsewhere-{suffix}", [0.0] * 20, first_task=100)  # other tasks
    board = board_of(server, slug)
    high, low, elsewhere = (board[f"{name}-{suffix}"] for name in ("high", "low", "elsewhere"))
    assert high["taskSet"] == low["taskSet"] and high["taskSet"]["tasks"] == 20
    assert elsewhere["taskSet"]["id"] != high["taskSet"]["id"]
    assert (high["rank"], low["rank"]) == (1, 2)
    assert elsewhere["rank"] == 1 and elsewhere["rankRange"] == {"best": 1, "worst": 1}


# Item 4: the paired comparison ------------------------------------------------------------------------


def compare(server: LiveServer, slug: str, **params: str) -> dict[str, Any]:
    response = anonymous(server).get(f"/v1/bench/benchmarks/{slug}/compare", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_three_of_five_against_two_of_five_is_an_exact_mcnemar_p_of_one(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    upload(admin, slug, f"three-{suffix}", [1.0, 1.0, 1.0, 0.0, 0.0])
    upload(admin, slug, f"two-{suffix}", [1.0, 1.0, 0.0, 0.0, 0.0])
    answer = compare(server, slug, a=f"three-{suffix}", b=f"two-{suffix}")
    # One discordant task, won by a: p = min(1, 2 * P(X <= 0 | X ~ Binomial(1, 1/2))) = min(1, 2 * 0.5) = 1.
    assert answer["method"] == "exact_mcnemar" and answer["pValue"] == 1.0
    assert answer["sharedTasks"] == 5 and answer["a"]["modelKey"] == f"three-{suffix}"
    assert (answer["meanA"], answer["meanB"], answer["difference"]) == (
        pytest.approx(0.6), pytest.approx(0.4), pytest.approx(0.2))
    # Differences 0, 0, 1, 0, 0: sum of squared deviations 4 * 0.04 + 0.64 = 0.8; se = sqrt(0.8 / (5 * 4)) = 0.2.
    assert answer["se"] == pytest.approx(0.2)
    # The interval inverting the test: 1 of 5 tasks discordant, exact 95% upper bound of that share 0.7164
    # (Beta(2, 4)'s 97.5% point); A won 1 of 1, exact interval [0.025, 1]: [0.7164 * -0.95, 0.7164 * 1].
    assert answer["interval"] == {"low": pytest.approx(-0.6806, abs=1e-4), "high": pytest.approx(0.7164, abs=1e-4)}
    # The leaderboard cannot order them either.
    board = board_of(server, slug)
    assert board[f"three-{suffix}"]["rank"] == board[f"two-{suffix}"]["rank"] == 1


def test_eight_discordant_tasks_one_way_are_significant(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    upload(admin, slug, f"nine-{suffix}", [1.0] * 9 + [0.0])
    upload(admin, slug, f"one-{suffix}", [1.0] + [0.0] * 9)
    answer = compare(server, slug, a=f"nine-{suffix}", b=f"one-{suffix}")
    # 8 discordant, all won by a: p = 2 * (1/2)^8 = 0.0078125 (scipy's exact binomial test agrees).
    assert answer["pValue"] == pytest.approx(2 / 256)
    assert answer["pValue"] == pytest.approx(scipy_stats.binomtest(8, 8, 0.5).pvalue)
    # The share A won: [0.025^(1/8), 1] = [0.6306, 1]; the share discordant 8/10: [0.4439, 0.9748] (Beta(8, 3)'s
    # 2.5% and Beta(9, 2)'s 97.5% points): [0.4439 * (2 * 0.6306 - 1), 0.9748] = [0.1159, 0.9748], above 0.
    assert answer["difference"] == pytest.approx(0.8)
    assert answer["interval"] == {"low": pytest.approx(0.1159, abs=1e-4), "high": pytest.approx(0.9748, abs=1e-4)}


def test_a_continuous_pair_gets_the_paired_t_figures(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    a = [0.90, 0.80, 0.70, 0.60, 0.95, 0.85, 0.75, 0.65]
    b = [0.85, 0.85, 0.60, 0.65, 0.80, 0.90, 0.70, 0.60]
    upload(admin, slug, f"cont-a-{suffix}", a)
    upload(admin, slug, f"cont-b-{suffix}", b)
    upload(admin, slug, f"cont-b-{suffix}", [0.5], first_task=50)  # a task only b ran: left out
    answer = compare(server, slug, a=f"cont-a-{suffix}", b=f"cont-b-{suffix}")
    # Differences .05 -.05 .10 -.05 .15 -.05 .05 .05: mean 0.03125, sum of squared deviations 0.0396875,
    # s^2 = 0.0056696, se = sqrt(s^2 / 8) = 0.026621, t = 1.1739 on 7 degrees of freedom: p = 0.279;
    # 95% interval 0.03125 -+ 2.3646 * 0.026621 = [-0.0317, 0.0942].
    assert answer["method"] == "paired_t" and answer["sharedTasks"] == 8
    assert answer["meanA"] == pytest.approx(0.775) and answer["meanB"] == pytest.approx(0.74375)
    assert answer["difference"] == pytest.approx(0.03125) and answer["se"] == pytest.approx(0.026621, abs=1e-6)
    assert answer["pValue"] == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue)
    assert answer["pValue"] == pytest.approx(0.279, abs=1e-3)
    assert answer["interval"] == {"low": pytest.approx(-0.0317, abs=1e-4), "high": pytest.approx(0.0942, abs=1e-4)}
    reverse = compare(server, slug, a=f"cont-b-{suffix}", b=f"cont-a-{suffix}")
    assert reverse["difference"] == pytest.approx(-0.03125) and reverse["pValue"] == pytest.approx(answer["pValue"])


def test_agents_are_chosen_with_agent_a_and_agent_b(server: LiveServer, admin: Admin) -> None:
    slug, model = custom_benchmark(admin)["slug"], f"agents-{uuid.uuid4().hex[:6]}"
    upload(admin, slug, model, [1.0] * 6 + [0.0] * 4, agent="alpha")
    upload(admin, slug, model, [0.0] * 6 + [1.0] * 4, agent="beta")
    answer = compare(server, slug, a=model, b=model, agentA="alpha", agentB="beta")
    assert (answer["a"]["agent"], answer["b"]["agent"]) == ("alpha", "beta")
    # All ten tasks discordant, 6 won by alpha: p = 2 * P(X <= 4 | 10, 1/2) = 2 * 386 / 1024 = 0.7539.
    assert answer["pValue"] == pytest.approx(2 * 386 / 1024)


@pytest.mark.parametrize(("path_slug", "params", "status", "code"), [
    ("no-such-benchmark", {"a": "x", "b": "y"}, 404, "not_found"),
    (None, {"a": "nobody-ran-this", "b": "{b}"}, 404, "not_found"),
    (None, {"a": "{a}", "b": "{b}", "agentA": "no-such-agent"}, 404, "not_found"),
    (None, {"a": "{a}"}, 422, "validation_failed"),
    (None, {"a": "{a}", "b": ""}, 422, "validation_failed"),
    (None, {"a": "{a}", "b": "{a}"}, 422, "invalid_request"),
    (None, {"a": "{a}", "b": "{elsewhere}"}, 422, "no_shared_tasks"),
])
def test_bad_comparisons_are_clear_problems(server: LiveServer, admin: Admin, path_slug: str | None,
                                            params: dict[str, str], status: int, code: str) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    names = {"a": f"pa-{suffix}", "b": f"pb-{suffix}", "elsewhere": f"pe-{suffix}"}
    upload(admin, slug, names["a"], [1.0, 0.0, 1.0])
    upload(admin, slug, names["b"], [0.0, 0.0, 1.0])
    upload(admin, slug, names["elsewhere"], [1.0, 1.0], first_task=100)
    response = anonymous(server).get(f"/v1/bench/benchmarks/{path_slug or slug}/compare",
                                     params={key: value.format(**names) for key, value in params.items()})
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def test_the_openapi_document_describes_compare(server: LiveServer) -> None:
    document = anonymous(server).get("/v1/meta/benchhub-openapi.json").json()
    operation = document["paths"]["/v1/bench/benchmarks/{slug}/compare"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"slug", "a", "b", "agentA", "agentB"}
    assert {"404", "422"} <= set(operation["responses"])
    schema = document["components"]["schemas"]["Comparison"]
    assert set(schema["required"]) >= {"a", "b", "sharedTasks", "meanA", "meanB", "difference", "se", "interval",
                                       "pValue", "method"}


def test_the_benchmark_page_shows_the_pairwise_table(server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    upload(admin, slug, f"page-a-{suffix}", [1.0] * 9 + [0.0])
    upload(admin, slug, f"page-b-{suffix}", [1.0] + [0.0] * 9)
    page = anonymous(server).get(f"/benchhub/{slug}").text
    _, _, table = page.partition("Paired comparisons")
    assert f"page-a-{suffix}" in table and f"page-b-{suffix}" in table
    assert "+0.800" in table and "0.00781" in table and "exact mcnemar" in table
