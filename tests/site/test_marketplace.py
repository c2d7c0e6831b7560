"""The marketplace in the browser: publish an exchange task, a bot claims and submits over the API,
the reviewer accepts in the browser, the claim reads accepted and the balances moved. And what users
wrote is shown inert."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Locator, Page, expect

from tests.site.conftest import log_in, new_page, page_problems, shoot
from tests.support.api import Account, Admin
from tests.support.server import LiveServer


def balance(account: Account) -> float:
    response = account.http.get("/v1/profile/balance")
    assert response.status_code == 200, response.text
    return float(response.json()["balance"])


def credit(admin: Admin, account: Account, amount: int) -> None:
    response = admin.http.post("/v1/admin/credit", json={"email": account.user["email"], "amount": amount})
    assert response.status_code == 200, response.text


def publish_via_api(publisher: Account, **fields: Any) -> str:
    created = publisher.http.post("/v1/tasks", json=fields)
    assert created.status_code == 200, created.text
    task_id = str(created.json()["id"])
    published = publisher.http.post(f"/v1/tasks/{task_id}/publish")
    assert published.status_code == 200, published.text
    return task_id


def test_publish_claim_submit_review_settle(page: Page, browser: Browser, server: LiveServer, admin: Admin) -> None:
    publisher, reviewer, operator = admin.account("publisher"), admin.account("reviewer"), admin.account("operator")
    credit(admin, publisher, 100)
    bot = operator.bot(name="settler")
    operator_before = balance(operator)

    log_in(page, publisher.user["email"])
    page.get_by_role("link", name="Publish", exact=True).click()
    expect(page.get_by_test_id("balance")).to_have_text("100.00")  # money always has two decimals
    page.get_by_label("Module").select_option("translate")
    expect(page.get_by_label("Source language")).to_be_visible()  # module fields follow the module
    page.get_by_label("Module").select_option("exchange")
    expect(page.get_by_label("Source language")).to_have_count(0)
    page.get_by_label("Title").fill("Write a README for the parser")
    page.get_by_label("Description", exact=False).first.fill("Explain **usage** and [the spec](https://example.com/spec).")
    page.get_by_label("Bounty").fill("25")
    page.get_by_label("Deliverables").fill("README.md with usage\nExamples that run")
    shoot(page, server, "publish")
    page.get_by_role("button", name="Create task").click()
    page.wait_for_url(re.compile(r".*/tasks/task_[0-9a-z]+$"))
    task_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_text("published", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="the spec")).to_have_attribute("href", "https://example.com/spec")
    assert balance(publisher) == 75

    page.goto("/?module=exchange")
    expect(page.get_by_role("link", name="Write a README for the parser")).to_be_visible()
    listed = page.locator("li", has=page.get_by_role("link", name="Write a README for the parser"))
    expect(listed.locator(".bounty").first).to_have_text("25.00")
    shoot(page, server, "board")
    page.get_by_label("Status").select_option("completed")  # htmx swaps the results and pushes the URL
    page.wait_for_url(re.compile(r".*status=completed"))
    expect(page.get_by_role("link", name="Write a README for the parser")).to_have_count(0)

    claim = bot.http.post(f"/v1/agent/tasks/{task_id}/claim")
    assert claim.status_code == 200, claim.text
    claim_id = claim.json()["claimId"]
    submitted = bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={
        "resultType": "text", "content": "# README\n\nRun `parse file.txt`. See [docs](https://example.com/docs)."})
    assert submitted.status_code == 200, submitted.text

    page.reload()
    page.goto(f"/tasks/{task_id}")
    expect(page.locator("tr", has_text=claim_id)).to_contain_text("submitted")
    expect(page.locator("tr", has_text=claim_id)).to_contain_text(f"settler {bot.id}")  # the bot by name
    shoot(page, server, "task-owner")

    reviewer_page = new_page(browser, server)
    log_in(reviewer_page, reviewer.user["email"])
    reviewer_page.get_by_role("link", name="Review", exact=True).click()
    card = find_in_queue(reviewer_page, claim_id)
    expect(card.get_by_role("heading", name="README", exact=True)).to_be_visible()  # markdown rendered
    expect(card).to_contain_text(f"bot settler {bot.id}")  # named, with the id to copy
    expect(card.get_by_role("link", name="docs")).to_have_attribute("href", "https://example.com/docs")
    card.get_by_label("README.md with usage").check()
    card.get_by_label("Examples that run").check()
    card.get_by_label("Comment").fill("Clear and complete <thanks>.")
    shoot(reviewer_page, server, "review")
    card.get_by_role("button", name="Accept").click()
    expect(reviewer_page.get_by_role("status")).to_contain_text("Accepted")
    expect(reviewer_page.locator("article", has_text=claim_id)).to_have_count(0)
    assert not page_problems(reviewer_page), page_problems(reviewer_page)
    reviewer_page.context.close()

    status = bot.http.get(f"/v1/agent/claims/{claim_id}/status").json()
    assert status["status"] == "accepted" and status["reviewState"] == "accepted"
    assert status["deliverables"] == [True, True]
    assert balance(operator) == operator_before + 25
    assert balance(publisher) == 75

    page.goto("/profile/")
    expect(page.get_by_test_id("balance")).to_have_text("75.00")  # the publisher's, in the browser
    page.goto(f"/tasks/{task_id}")
    expect(page.locator("tr", has_text=claim_id)).to_contain_text("accepted")
    expect(page.get_by_text("completed", exact=True)).to_be_visible()
    page.goto("/leaderboard")
    # Other tests share this server, so the bot may rank below the first 50; the board itself shows.
    expect(page.get_by_role("heading", name="Bots by accepted work")).to_be_visible()
    expect(page.locator("table tbody tr").first).to_be_visible()
    shoot(page, server, "leaderboard")


EVIL = """Hello <script>window.pwned = 1</script>

[click me](javascript:window.pwned=2) and <a href="javascript:window.pwned=3">raw link</a>

<img src="x" onerror="window.pwned=4"> ![pic](javascript:window.pwned=5)

[fine](https://example.com/fine)"""


def submit(bot: Any, task_id: str, body: dict[str, Any]) -> str:
    claim = bot.http.post(f"/v1/agent/tasks/{task_id}/claim")
    assert claim.status_code == 200, claim.text
    claim_id = str(claim.json()["claimId"])
    submitted = bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json=body)
    assert submitted.status_code == 200, submitted.text
    return claim_id


def test_scripts_and_javascript_links_are_inert(page: Page, server: LiveServer, admin: Admin) -> None:
    publisher, reviewer, operator = admin.account("publisher"), admin.account("reviewer"), admin.account("operator")
    task_id = publish_via_api(publisher, module="fun", title="<script>window.pwned=6</script> title",
                              description=EVIL)
    claim_id = submit(operator.bot(), task_id, {"resultType": "text", "content": EVIL})
    picture = "https://example.com/picture.png"
    artist = operator.bot()
    image_claim = submit(artist, publish_via_api(publisher, module="fun", title="Draw a cat"),
                         {"resultType": "image", "content": picture})

    page.goto(f"/tasks/{task_id}")
    expect(page.get_by_role("heading", name="<script>window.pwned=6</script> title")).to_be_visible()
    _assert_inert(page)

    log_in(page, reviewer.user["email"])
    page.goto("/review/?module=fun")
    artifact = find_in_queue(page, claim_id).get_by_test_id("artifact")
    expect(artifact).to_contain_text("<script>window.pwned = 1</script>")  # shown as text
    expect(artifact.get_by_role("link", name="fine")).to_have_attribute("href", "https://example.com/fine")
    assert artifact.locator("img").count() == 0
    _assert_inert(page, images_allowed=True)
    shoot(page, server, "review-inert")

    # An image artifact is shown inline (https only).
    page.goto("/review/?module=fun")
    card = find_in_queue(page, image_claim)
    expect(card.get_by_test_id("artifact").locator("img")).to_have_attribute("src", picture)
    _assert_inert(page, images_allowed=True)

    # The appeals queue: reject in the browser, the bot appeals over the API, the reviewer upholds.
    card.get_by_label("Comment").fill("That is a dog.")
    card.get_by_role("button", name="Reject").click()
    expect(page.get_by_role("status")).to_contain_text("Rejected")
    appeal = artist.http.post(f"/v1/agent/claims/{image_claim}/appeal",
                              json={"reason": "It is a **cat** <script>window.pwned=7</script>",
                                    "evidenceUrls": ["https://example.com/cat-facts"]})
    assert appeal.status_code == 200, appeal.text
    page.get_by_role("link", name="Appeals", exact=True).click()
    case = find_in_queue(page, image_claim)
    expect(case).to_contain_text("That is a dog.")
    expect(case).to_contain_text(f"bot {artist.bot['name']} {artist.id}")
    expect(case.get_by_role("link", name="https://example.com/cat-facts")).to_be_visible()
    _assert_inert(page, images_allowed=True)
    shoot(page, server, "appeals")
    # The reviewer who rejected does not judge the appeal: another reviewer does.
    expect(case.get_by_test_id("conflict-of-interest")).to_be_visible()
    expect(case.get_by_role("button", name=re.compile("Uphold"))).to_have_count(0)
    page.context.clear_cookies()
    log_in(page, admin.account("reviewer").user["email"])
    page.goto("/appeals/")
    case = find_in_queue(page, image_claim)
    case.get_by_label("Comment").fill("Upheld: whiskers visible.")
    case.get_by_role("button", name=re.compile("Uphold")).click()
    expect(page.get_by_role("status")).to_contain_text("upheld")
    status = artist.http.get(f"/v1/agent/claims/{image_claim}/status").json()
    assert status["reviewState"] == "appeal_upheld" and status["status"] == "accepted"


def find_in_queue(page: Page, claim_id: str) -> Locator:
    """The claim's card in a review or appeals queue, following "Older" pages: the live server is
    shared with other tests, whose submissions may come first (oldest first)."""
    for _ in range(200):
        card = page.locator("article", has_text=claim_id)
        if card.count():
            return card
        older = page.locator("a[rel=next]")
        assert older.count(), f"{claim_id} is not in the queue"
        older.click()
        page.wait_for_load_state()
    raise AssertionError(f"{claim_id} not found within 200 pages")


def _assert_inert(page: Page, images_allowed: bool = False) -> None:
    assert page.evaluate("window.pwned") is None
    assert page.locator("main script").count() == 0
    assert page.locator("[onerror], [onclick], [onload]").count() == 0
    assert page.locator("a[href^='javascript:' i], img[src^='javascript:' i]").count() == 0
    assert page.locator("main img:not([src^='https://'])").count() == 0
    if not images_allowed:
        assert page.locator("main img").count() == 0


def test_publisher_cancels_in_the_browser_and_is_refunded(page: Page, server: LiveServer, admin: Admin) -> None:
    publisher = admin.account("publisher")
    credit(admin, publisher, 40)
    task_id = publish_via_api(publisher, module="crew", title="Port the parser", bountyAmount=30,
                              repositoryUrl="https://github.com/example/parser")
    assert balance(publisher) == 10
    log_in(page, publisher.user["email"])
    page.goto(f"/tasks/{task_id}")
    expect(page.get_by_role("link", name="https://github.com/example/parser")).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel task").click()
    expect(page.get_by_text("cancelled", exact=True)).to_be_visible()  # htmx swapped the page's main part
    expect(page.get_by_role("button", name="Cancel task")).to_have_count(0)
    assert page.locator("main").count() == 1 and page.locator("header.top").count() == 1
    assert balance(publisher) == 40
