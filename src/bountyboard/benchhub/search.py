"""Benchmark search by whole words: one pure rule, used by the hub's search route and by
``bench search --registry`` on a static index (the CLI shows the hub's answers as they come).

Each query word must be a whole word of the record (``swe`` is in "SWE-bench", not in "answer") or
the start of one (``math`` finds "mathematics"). Whole words rank before prefixes, and a whole word
of the slug or name before one of the description, tags or dataset; ties go by slug.
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"[^\W_]+")
TITLE_WORD, TEXT_WORD, PREFIX = 4, 3, 1


def words(text: str) -> list[str]:
    """The case-folded words of ``text`` (letters and digits; ``-``, ``_`` and spaces separate)."""
    return _WORD.findall(text.casefold())


def _title(record: dict[str, Any]) -> str:
    return f"{record.get('slug') or ''} {record.get('name') or ''}"


def _text(record: dict[str, Any]) -> str:
    adapter = (record.get("harbor") or {}).get("adapter") or {}
    where = adapter.get("dataset") or adapter.get("ref") or adapter.get("harness") or ""
    return " ".join([str(record.get("description") or ""), *map(str, record.get("tags") or []), str(where)])


def searchable_text(record: dict[str, Any]) -> str:
    """Every word a query can match, space-separated: a database may narrow with ``LIKE '%word%'``
    on it before :func:`rank_records` decides."""
    return " ".join(words(f"{_title(record)} {_text(record)}"))


def search_rank(record: dict[str, Any], query: str) -> int | None:
    """How well a record answers a query (higher is better); None when it does not."""
    title = set(words(_title(record)))
    text = set(words(_text(record)))
    rank = 0
    for word in words(query):
        if word in title:
            rank += TITLE_WORD
        elif word in text:
            rank += TEXT_WORD
        elif any(candidate.startswith(word) for candidate in title | text):
            rank += PREFIX
        else:
            return None
    return rank


def rank_records(records: list[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """The records that match ``query``, best first (then by slug); all of them, by slug, for no words."""
    ranked = [(rank, record) for record in records if (rank := search_rank(record, query)) is not None]
    return [record for _, record in sorted(ranked, key=lambda item: (-item[0], str(item[1].get("slug"))))]
