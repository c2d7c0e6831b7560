"""Column types of more than one domain's models."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Generic, TypeVar

from sqlalchemy import String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

E = TypeVar("E", bound=StrEnum)


class StrEnumColumn(TypeDecorator[E], Generic[E]):
    """A status enum stored as its value in a plain VARCHAR (the text the migrations created).

    Rows read back as enum members; an unknown value is refused when written, never stored.
    """

    impl = String
    cache_ok = True

    def __init__(self, enum: type[E], length: int) -> None:
        super().__init__(length)
        self.enum = enum

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else self.enum(value).value

    def process_result_value(self, value: Any, dialect: Dialect) -> E | None:
        return None if value is None else self.enum(value)
