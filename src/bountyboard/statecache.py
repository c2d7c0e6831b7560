"""Answers reused while the database has not changed since they were computed.

A request names the database's committed state once (``stamps``: SQLite's ``PRAGMA data_version``,
PostgreSQL's current snapshot; and the accounts version, which only changes to users, bots and keys
move). Two equal stamps mean that nothing they cover was committed in between, on any connection of
any process, so whatever was read under one still holds under the other: a cached answer is exact,
not eventually consistent, on every replica. A stamp is
read before the answer is computed, so an entry is at least as new as its stamp, and a passed stamp
never comes back. Answers that also move with the clock (a deadline passing) carry an ``until``.

Entries are bounded (least recently used out first): a caller cannot make the process hold more
than ``size`` answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from cachetools import LRUCache

from bountyboard.clock import now

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class _Entry(Generic[V]):
    stamp: str
    value: V
    until: datetime | None


class StampedCache(Generic[K, V]):
    """Values by key, each valid for the state stamp it was computed under (and until its clock bound)."""

    def __init__(self, size: int) -> None:
        self._entries: LRUCache[K, _Entry[V]] = LRUCache(size)

    def get(self, key: K, stamp: str | None) -> V | None:
        if stamp is None:
            return None
        entry = self._entries.get(key)
        if entry is None or entry.stamp != stamp or (entry.until is not None and now() >= entry.until):
            return None
        return entry.value

    def put(self, key: K, stamp: str | None, value: V, until: datetime | None = None) -> None:
        """Keep ``value`` for ``stamp``; without a stamp (a writing request) nothing is kept."""
        if stamp is not None:
            self._entries[key] = _Entry(stamp, value, until)
