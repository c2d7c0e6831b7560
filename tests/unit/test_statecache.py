"""The cache of answers keyed by the database's state stamp: a new stamp, a passed deadline or no stamp at
all (a writing request) means no answer from the cache."""

from __future__ import annotations

from datetime import timedelta

from bountyboard import clock
from bountyboard.statecache import StampedCache


def test_an_answer_holds_for_its_stamp_only() -> None:
    cache: StampedCache[str, int] = StampedCache(4)
    cache.put("page", "1:7", 42)
    assert cache.get("page", "1:7") == 42
    assert cache.get("page", "1:8") is None  # something was committed since
    assert cache.get("other", "1:7") is None


def test_without_a_stamp_nothing_is_kept_or_served() -> None:
    cache: StampedCache[str, int] = StampedCache(4)
    cache.put("page", None, 42)
    assert cache.get("page", None) is None
    cache.put("page", "1:7", 42)
    assert cache.get("page", None) is None


def test_an_answer_ends_at_its_clock_bound() -> None:
    cache: StampedCache[str, str] = StampedCache(4)
    cache.put("page", "1:7", "claim", until=clock.now() + timedelta(hours=1))
    assert cache.get("page", "1:7") == "claim"
    clock.advance(3600)
    try:
        assert cache.get("page", "1:7") is None
    finally:
        clock.advance(-3600)


def test_the_cache_holds_at_most_its_size() -> None:
    cache: StampedCache[int, int] = StampedCache(3)
    for key in range(5):
        cache.put(key, "1:1", key)
    assert [cache.get(key, "1:1") for key in range(5)] == [None, None, 2, 3, 4]
