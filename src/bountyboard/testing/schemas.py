"""Request and response shapes of the test-only routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bountyboard.accounts.schemas import ApiModel


class ClockAdvance(ApiModel):
    seconds: float = Field(gt=0, le=10 * 365 * 86400)


class ClockState(BaseModel):
    offsetSeconds: float
    now: str


class Hold(ApiModel):
    seconds: float = Field(gt=0, le=10)


class EventBurst(ApiModel):
    type: str
    count: int = Field(default=1, ge=1, le=1000)
    data: dict[str, Any] = Field(default_factory=dict)
    botId: str | None = None
    operatorId: str | None = None
    publisherId: str | None = None
