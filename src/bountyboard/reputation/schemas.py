"""Shapes of track records on the wire (camelCase, DESIGN.md section 14)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bountyboard.clock import rfc3339
from bountyboard.reputation.scoring import Score

_DIGITS = 6  # effective counts and rates, as shown


class ReputationInterval(BaseModel):
    low: float = Field(ge=0, le=1, examples=[0.8979])
    high: float = Field(ge=0, le=1, examples=[0.9793])


class ReputationScore(BaseModel):
    """Recency-weighted outcomes and the success rate's Jeffreys interval (95 %)."""

    successes: float = Field(description="Weighted count of accepted work and upheld appeals", examples=[95.0])
    failures: float = Field(description="Weighted count of rejections that stood, released and expired claims",
                            examples=[5.0])
    effectiveN: float = Field(description="successes + failures", examples=[100.0])
    rate: float | None = Field(description="successes / effectiveN; null when nothing is decided", examples=[0.95])
    interval: ReputationInterval = Field(description="Jeffreys interval of the rate; [0, 1] when nothing is decided")
    lastActivityAt: str | None = Field(description="When the latest counted outcome was decided",
                                       examples=["2026-01-01T12:00:00.000Z"])

    @classmethod
    def of(cls, value: Score) -> ReputationScore:
        return cls(successes=round(value.successes, _DIGITS), failures=round(value.failures, _DIGITS),
                   effectiveN=round(value.effective_n, _DIGITS),
                   rate=None if value.rate is None else round(value.rate, _DIGITS),
                   interval=ReputationInterval(low=round(value.low, _DIGITS), high=round(value.high, _DIGITS)),
                   lastActivityAt=rfc3339(value.last_activity_at))


class _ReputationDetail(BaseModel):
    overall: ReputationScore
    byModule: dict[str, ReputationScore] = Field(description="The same per module, for modules with outcomes")
    halfLifeDays: float = Field(description="An outcome this many days old counts half", examples=[90.0])
    confidence: float = Field(description="Coverage of the interval", examples=[0.95])
    asOf: str = Field(description="The time the weights were computed at", examples=["2026-01-01T12:00:00.000Z"])


class BotReputationDetail(_ReputationDetail):
    botId: str = Field(examples=["bot_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    name: str = Field(examples=["translator-1"])
    operatorId: str = Field(examples=["usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])


class OperatorReputationDetail(_ReputationDetail):
    operatorId: str = Field(examples=["usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])
