"""storage.replica: who counts as the same caller, and how long a write keeps its reads on the primary."""

from __future__ import annotations

import time

from bountyboard.storage.replica import RecentWriters, callers


def _scope(*headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {"type": "http", "headers": list(headers)}


def test_a_caller_is_its_key_or_any_of_its_cookies() -> None:
    key = callers(_scope((b"authorization", b"Bearer svc-a")))
    other_key = callers(_scope((b"authorization", b"Bearer svc-b")))
    browser = callers(_scope((b"cookie", b"bb_session=s1; bb_csrf=c1")))
    same_browser_later = callers(_scope((b"cookie", b"bb_csrf=c1")))
    assert callers(_scope()) == ()
    assert len(browser) == 2 and set(same_browser_later) < set(browser)
    assert not set(key) & set(other_key)
    assert all(b"svc-" not in digest for digest in key)  # digests, not the credentials

    writers = RecentWriters(window=0.2)
    writers.mark(key + browser)
    assert writers.wrote_recently(key) and writers.wrote_recently(same_browser_later)
    assert not writers.wrote_recently(other_key) and not writers.wrote_recently(())
    time.sleep(0.25)
    assert not writers.wrote_recently(key)
