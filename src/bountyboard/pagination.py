"""List envelopes: page-numbered lists and cursor lists (DESIGN.md section 4)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel, Field
from sqlalchemy import and_, or_
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.clock import as_utc
from bountyboard.contract.pages import PAGE_NUMBER_MAX, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX
from bountyboard.errors import ErrorCode, invalid
from bountyboard.querystrings import QueryModel

T = TypeVar("T")


class PageParams(BaseModel):
    page: int = Field(1, ge=1, le=PAGE_NUMBER_MAX, description="1-based page number")
    pageSize: int = Field(PAGE_SIZE_DEFAULT, ge=1, le=PAGE_SIZE_MAX, description="Items per page")

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.pageSize


# Query parameters read into one model, not a dependency: FastAPI resolves each dependency on every
# request, at a cost a polled list notices.
Paging = Annotated[PageParams, Query()]
"""A list route's parameter type for ``page`` and ``pageSize``."""


class Page(BaseModel, Generic[T]):
    data: list[T]
    page: int
    pageSize: int
    total: int
    hasMore: bool

    @classmethod
    def of(cls, items: Sequence[T], params: PageParams, total: int) -> Page[T]:
        return cls(data=list(items), page=params.page, pageSize=params.pageSize, total=total,
                   hasMore=params.offset + len(items) < total)


class KeysetPage(Page[T], Generic[T]):
    """A page that also gives the cursor of its last item: pass it as ``after`` for the next page.

    Pages taken by cursor do not shift when items are added before them, as numbered pages do.
    """

    nextCursor: str | None

    @classmethod
    def after(cls, items: Sequence[T], params: PageParams, total: int, more: bool,
              last: Cursor | None) -> KeysetPage[T]:
        return cls(data=list(items), page=params.page, pageSize=params.pageSize, total=total, hasMore=more,
                   nextCursor=last.encode() if more and last is not None else None)


class CursorListQuery(QueryModel, PageParams):
    """The query of a list taken by page or by cursor; lists add their filters to it."""

    after: str | None = Field(
        None, max_length=200,
        description="nextCursor of the previous page: the items after it, in the list's order; pages taken this "
                    "way do not shift when items are added. With after, page must be 1 (or omitted).")


class Cursor(BaseModel):
    """Where a keyset page ends: its last item's sort time and id (the list's order is newest first)."""

    at: datetime
    id: str

    def encode(self) -> str:
        raw = json.dumps([as_utc(self.at).isoformat(), self.id], separators=(",", ":")).encode()  # to the µs
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, cursor: str, params: PageParams) -> Cursor:
        if params.page != 1:
            raise invalid("Use either page or after, not both.",
                          [{"field": "after", "message": "only with page 1"}], code=ErrorCode.INVALID_CURSOR)
        try:
            at, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            return cls(at=as_utc(datetime.fromisoformat(at)), id=str(key))
        except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
            raise invalid("after is not a cursor this list gave (use its nextCursor).",
                          [{"field": "after", "message": "not a cursor of this list"}],
                          code=ErrorCode.INVALID_CURSOR) from None

    def before(self, at: Any, id_: Any) -> ColumnElement[bool]:
        """Rows after this cursor in a newest-first (``at`` desc, ``id`` desc) order."""
        return or_(at < self.at, and_(at == self.at, id_ < self.id))


class CursorPage(BaseModel, Generic[T]):
    data: list[T]
    nextCursor: str | None
    hasMore: bool


class DataList(BaseModel, Generic[T]):
    """An unpaginated list (a caller's bots, keys, webhooks: small by nature)."""

    data: list[T]
