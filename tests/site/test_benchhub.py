"""The benchmark hub pages: search, a benchmark's chart of scores by model, a model's reproduced results and gaps,
a run's outcome per task."""

from __future__ import annotations

import hashlib
import re
import uuid

from playwright.sync_api import Page, expect

from tests.benchhub.helpers import custom_benchmark, payload
from tests.site.conftest import shoot
from tests.support.api import Account, Admin
from tests.support.server import LiveServer


def upload(uploader: Account, model: str, rewards: list[float]) -> None:
    """A run uploaded with a fresh account's key (its own daily limit, not the shared per-address one)."""
    body = {
        "benchmark": "gsm8k", "model": model, "agent": {"name": "terminus-2", "version": "1"},
        "harness": {"name": "bountyboard", "version": "0.1.0"}, "dataset": {"ref": "openai/gsm8k", "revision": "main"},
        "trials": [{"taskId": f"gsm8k-{index}", "trialName": f"gsm8k-{index}__t", "rewards": {"reward": reward}}
                   for index, reward in enumerate(rewards)],
        "bundleSha256": hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
    }
    response = uploader.http.post("/v1/runs", json=body)
    assert response.status_code == 200, response.text


def test_search_benchmark_chart_and_model_page(page: Page, server: LiveServer, admin: Admin) -> None:
    model = f"site-model-{uuid.uuid4().hex[:6]}"
    upload(admin.account("operator"), model, [1, 1, 0, 1, 1, 1, 0, 1])

    page.goto("/benchhub/")
    page.get_by_label("Search").fill("grade-school")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("link", name="GSM8K", exact=True)).to_be_visible()
    shoot(page, server, "benchhub")
    page.get_by_role("link", name="GSM8K", exact=True).click()
    page.wait_for_url(re.compile(r".*/benchhub/gsm8k$"))
    chart = page.locator("svg.chart")
    expect(chart.locator("rect.bar")).not_to_have_count(0)   # a bar for the measured model
    expect(chart.locator("circle.claim")).not_to_have_count(0)  # a ring for a claimed reference score
    expect(chart.locator("title", has_text=model)).to_have_count(1)
    shoot(page, server, "benchmark")

    page.get_by_role("link", name=model).click()
    expect(page.get_by_role("heading", name=model)).to_be_visible()
    # The model's standing on GSM8K (the runs table below names the benchmark too, by its slug).
    row = page.locator("tr", has_text="GSM8K").filter(has_text="runs only")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("0.750")
    page.get_by_text(re.compile(r"benchmarks? to run")).click()
    expect(page.get_by_text("bountyboard bench pull").first).to_be_visible()  # gaps carry their command
    shoot(page, server, "bench-model")


def test_the_benchmark_page_draws_claims_that_came_with_uploads(page: Page, server: LiveServer, admin: Admin) -> None:
    record = custom_benchmark(admin)  # no reference scores of its own
    model = f"lab-{uuid.uuid4().hex[:6]}/site-model"
    response = admin.account("operator").http.post("/v1/runs", json=payload(
        record["slug"], model, [1.0, 1.0, 0.0, 1.0], claim={"value": 0.7, "sourceUrl": "https://example.org/card"}))
    assert response.status_code == 200, response.text

    page.goto(f"/benchhub/{record['slug']}")
    chart = page.locator("svg.chart")
    expect(chart.locator("circle.claim")).to_have_count(1)  # the ring of the uploaded claim, on the model's row
    expect(chart.locator("title", has_text=model)).to_contain_text("claimed 0.700")
    claimed = page.locator("section", has=page.get_by_role("heading", name="Claimed"))
    expect(claimed.get_by_role("link", name=model)).to_be_visible()
    expect(claimed).to_contain_text("0.7")
    expect(claimed).to_contain_text("claimed with an upload by")
    # The model's page takes the same claim; the uploader's own run does not reproduce it.
    claimed.get_by_role("link", name=model).click()
    row = page.locator("tr", has_text=record["name"]).first
    expect(row).to_contain_text("0.700")
    expect(row).to_contain_text("self reported")
    expect(row).to_contain_text("only the claimant's own runs")


def test_benchmark_page_shares_ranks_and_compares_pairs(page: Page, server: LiveServer, admin: Admin) -> None:
    slug, suffix = custom_benchmark(admin)["slug"], uuid.uuid4().hex[:6]
    for name, rewards in (("sure", [1.0] * 9 + [0.0]), ("twin-a", [1.0] * 5 + [0.0] * 5),
                          ("twin-b", [1.0] * 5 + [0.0] * 5)):
        response = admin.account().http.post("/v1/runs", json=payload(slug, f"{name}-{suffix}", rewards))
        assert response.status_code == 200, response.text
    page.goto(f"/benchhub/{slug}")
    measured = page.locator("section", has=page.get_by_role("heading", name="Measured"))
    # 9/10 is not surely above 5/10 (95%, n* = 9: Beta(8.6, 1.4) gives [0.60, 0.99], Beta(5, 5) [0.21, 0.79]),
    # so all three share rank 1, placed 1 to 3 (an en dash).
    for name in ("sure", "twin-a", "twin-b"):
        expect(measured.locator("tr", has_text=f"{name}-{suffix}").locator("td").first).to_have_text("1 (1\u20133)")
    pairs = page.locator("table.pairwise tbody tr")
    expect(pairs).to_have_count(3)
    expect(pairs.filter(has_text=f"twin-a-{suffix}").filter(has_text=f"twin-b-{suffix}")).to_contain_text("+0.000")
    shoot(page, server, "benchmark-pairs")


def test_a_run_page_shows_each_task_with_its_attempts(page: Page, server: LiveServer, admin: Admin) -> None:
    model = f"site-run-{uuid.uuid4().hex[:6]}"
    body = {
        "benchmark": "gsm8k", "model": model, "agent": {"name": "terminus-2", "version": "1"},
        "harness": {"name": "bountyboard", "version": "0.1.0"}, "dataset": {"ref": "openai/gsm8k", "revision": "main"},
        # Two tasks of two attempts; the second task's second attempt errored without a reward.
        "trials": [{"taskId": "gsm8k-0", "trialName": "a", "rewards": {"reward": 1}},
                   {"taskId": "gsm8k-1", "trialName": "b", "rewards": {"reward": 1}},
                   {"taskId": "gsm8k-0", "trialName": "c", "rewards": {"reward": 0}},
                   {"taskId": "gsm8k-1", "trialName": "d", "error": "verifier timed out"}],
        "bundleSha256": hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
    }
    response = admin.account("operator").http.post("/v1/runs", json=body)
    assert response.status_code == 200, response.text

    page.goto(f"/benchhub/models/{model}")
    runs = page.locator("section", has=page.get_by_role("heading", name="Runs"))
    runs.get_by_role("link", name=response.json()["run"]["id"]).click()
    expect(page.get_by_role("heading", name=f"{model} on gsm8k")).to_be_visible()
    expect(page.locator("#run-totals")).to_contain_text("0.5000")
    first, second = page.locator('tr[data-task="gsm8k-0"]'), page.locator('tr[data-task="gsm8k-1"]')
    expect(first.locator(".chip")).to_have_text(["1", "0"])
    expect(first).to_contain_text("0.500")
    expect(second.locator(".chip")).to_have_text(["1", "no reward"])
    expect(second).to_contain_text("1: verifier timed out")
    shoot(page, server, "bench-run")
