"""The review page in Chromium: images inline, audio playable, and script in uploaded files never runs."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.files import samples
from tests.files.support import FileServer, upload
from tests.market.support import Market, claim, submit
from tests.site.conftest import log_in, new_page, page_problems, shoot
from tests.site.test_marketplace import find_in_queue
from tests.support.api import Admin


@pytest.fixture
def page(browser: Browser, files_server: FileServer) -> Iterator[Page]:
    page = new_page(browser, files_server.live)
    yield page
    page.context.close()


def _rendered_anyway(page: Page, dropped: set[str]) -> None:
    """Make file answers render in the browser instead of downloading, without the ``dropped`` headers:
    what a browser that ignored ``Content-Disposition`` would do."""
    def handle(route: Route) -> None:
        answer = route.fetch()
        route.fulfill(response=answer, headers={name: value for name, value in answer.headers.items()
                                                if name.lower() not in dropped | {"content-disposition"}})
    page.context.route("**/v1/files/**", handle)


def test_review_page_shows_image_and_audio_and_script_in_files_stays_inert(
        page: Page, browser: Browser, files_server: FileServer, market: Market, files_admin: Admin) -> None:
    publisher = market.publisher(funds=100)
    task = market.task(publisher, "arena", bounty=10)
    bot = market.operator().bot()
    claim_id = claim(bot, task["id"])
    files = [("image", "drawing.png", "image/png", samples.png()),
             ("audio", "voice.wav", "audio/wav", samples.wav()),
             ("image", "trap.svg", "image/svg+xml", samples.SVG_WITH_SCRIPT),
             ("document", "trap.html", "text/html", samples.HTML_WITH_SCRIPT),
             ("document", "report.pdf", "application/pdf", samples.pdf())]
    attachments = [{"type": kind, "fileKey": upload(bot.http, claim_id, name, mime, data)["fileKey"]}
                   for kind, name, mime, data in files]
    submit(bot, claim_id, {"resultType": "image", "attachments": attachments})

    log_in(page, files_admin.account("reviewer").user["email"])
    page.goto("/review/?module=arena")
    items = find_in_queue(page, claim_id).get_by_test_id("attachment")
    expect(items).to_have_count(5)
    items.nth(0).scroll_into_view_if_needed()  # images load lazily, once they come into view

    # The PNG is drawn and the WAV loads in a player; the SVG, the HTML page and the PDF are downloads only.
    image = items.nth(0).locator("img")
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth === 4", arg=image.element_handle())
    audio = items.nth(1).locator("audio[controls]")
    expect(audio).to_be_visible()
    page.wait_for_function("a => a.readyState >= 1 && a.duration > 0.1", arg=audio.element_handle())
    for index in (2, 3, 4):
        assert items.nth(index).locator("img, audio, iframe, object, embed").count() == 0
        expect(items.nth(index).get_by_role("link", name="Download")).to_be_visible()
    shoot(page, files_server.live, "review-files")

    hrefs = [items.nth(index).get_by_role("link", name="Download").get_attribute("href") for index in (2, 3)]
    for href in hrefs:
        assert href
        answer = httpx.get(files_server.base_url + href)
        assert answer.headers["content-disposition"].startswith("attachment;")
        assert answer.headers["x-content-type-options"] == "nosniff"

    # Even rendered in a window the review page opens, under the service's headers the script does not run.
    _rendered_anyway(page, dropped=set())
    for href in hrefs:
        with page.expect_popup() as opened:
            page.evaluate("url => window.open(url)", href)
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.locator("[data-ran]").count() == 0
        popup.close()
    assert page.evaluate("window.pwned") is None
    assert not page_problems(page), page_problems(page)


def test_the_inert_check_sees_script_that_runs(page: Page, files_server: FileServer, market: Market) -> None:
    """The control of the test above: without the sandboxing policy, the same files' script runs."""
    bot = market.operator().bot()
    claim_id = claim(bot, market.task(market.publisher(funds=100), "arena", bounty=10)["id"])
    key = upload(bot.http, claim_id, "trap.html", "text/html", samples.HTML_WITH_SCRIPT)["fileKey"]
    link = bot.http.get(f"/v1/files/{key}/link").json()["downloadUrl"]
    _rendered_anyway(page, dropped={"content-security-policy"})
    page.goto(link)
    expect(page.locator("[data-ran]")).to_have_count(1)
