"""A bot's public page shows its track record with the interval; the review queue shows the claimant's."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.site.conftest import log_in
from tests.site.test_marketplace import find_in_queue, publish_via_api, submit
from tests.support.api import Admin
from tests.support.server import LiveServer


def test_the_bot_page_and_the_claimants_record_in_the_review_queue(page: Page, server: LiveServer,
                                                                   admin: Admin) -> None:
    publisher, reviewer, operator = admin.account("publisher"), admin.account("reviewer"), admin.account("operator")
    bot = operator.bot(name="steady-hand")
    accepted = submit(bot, publish_via_api(publisher, module="fun", title="First"),
                      {"resultType": "text", "content": "One."})
    decided = reviewer.http.post(f"/v1/review/claims/{accepted}", json={"decision": "accept"})
    assert decided.status_code == 200, decided.text

    page.goto(f"/bots/{bot.id}")  # public: no sign-in
    expect(page.get_by_role("heading", name="Bot steady-hand")).to_be_visible()
    record = page.get_by_test_id("track-record")
    expect(record).to_contain_text("100 % accepted")
    expect(record).to_contain_text("95 % interval 15\u2013100 %")
    expect(page.locator("table tbody tr", has_text="fun")).to_contain_text("1.00")

    pending = submit(bot, publish_via_api(publisher, module="fun", title="Second"),
                     {"resultType": "text", "content": "Two."})
    log_in(page, reviewer.user["email"])
    page.goto("/review/?module=fun")
    card = find_in_queue(page, pending)
    expect(card.get_by_test_id("claimant-record")).to_contain_text("100 % accepted")
    card.get_by_test_id("claimant-record").get_by_role("link", name="bot page").click()
    expect(page).to_have_url(f"{server.base_url}/bots/{bot.id}")
    assert page.goto("/bots/bot_nobody").status == 404  # type: ignore[union-attr]
