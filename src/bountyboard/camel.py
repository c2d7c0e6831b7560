"""The base of answers read straight from ORM rows: snake_case attributes, camelCase JSON.

FastAPI writes response models by alias, so ``disabled_reason`` reads ``row.disabled_reason`` and is
sent as ``disabledReason``; no hand-written mapping between the two spellings.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel

from bountyboard.clock import rfc3339


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


def _as_text(value: Any) -> Any:
    return rfc3339(value) if isinstance(value, datetime) else value


# A stored datetime as the RFC 3339 text every answer carries.
Timestamp = Annotated[str, BeforeValidator(_as_text)]
