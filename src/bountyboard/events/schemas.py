"""Request and response shapes of events and webhooks (camelCase on the wire)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

from bountyboard.camel import CamelModel, Timestamp
from bountyboard.clock import rfc3339
from bountyboard.events.models import Event, WebhookDelivery, WebhookMessage

_WHK = "whk_01jd2k3m4n5p6q7r8s9t0v1w2x"
_EVT = "evt_01jd2k3m4n5p6q7r8s9t0v1w2x"


def _from_row(alias: str, column: str) -> AliasChoices:
    """A field read from a row's ``column`` when it is not the wire's ``alias`` (the JSON schema keeps ``alias``)."""
    return AliasChoices(alias, column)


class EventOut(CamelModel):
    id: str = Field(examples=[_EVT])
    type: str = Field(examples=["claim.reviewed"])
    timestamp: Timestamp = Field(validation_alias=_from_row("timestamp", "created_at"),
                                 examples=["2026-11-21T13:30:00.000Z"])
    sequence: int = Field(description="The feed's order: only grows in the order pollers see events (gaps allowed).",
                          examples=[42])
    data: dict[str, Any]

    @classmethod
    def of(cls, event: Event) -> EventOut:
        return cls.model_validate(event)


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2048, examples=["https://agent.example.com/hooks/bountyboard"])
    events: list[str] = Field(min_length=1, max_length=20, examples=[["claim.reviewed", "appeal.resolved"]],
                              description="Event kinds to receive. User keys: claim.reviewed and appeal.resolved "
                                          "only; bot keys: the four public kinds.")
    description: str = Field(default="", max_length=500)


class WebhookUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(default=None, min_length=1, max_length=2048)
    events: list[str] | None = Field(default=None, min_length=1, max_length=20)
    description: str | None = Field(default=None, max_length=500)
    enabled: bool | None = Field(default=None, description="true re-enables an endpoint that was disabled.")


class WebhookOut(CamelModel):
    id: str = Field(examples=[_WHK])
    url: str
    events: list[str]
    description: str
    enabled: bool
    disabled_reason: str | None
    disabled_at: Timestamp | None
    bot_id: str | None = Field(description="Set when the subscription was made with a bot key.")
    operator_id: str
    previous_secret_expires_at: Timestamp | None = Field(
        description="During a rotation, when the replaced secret stops signing.")
    created_at: Timestamp
    updated_at: Timestamp


class WebhookWithSecret(WebhookOut):
    secret: str = Field(description="The signing secret. Returned on create and rotate only.",
                        examples=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])


def _outcome(succeeded: Any) -> Any:
    """A delivery row's ``succeeded`` as the attempt's status."""
    if isinstance(succeeded, bool):
        return "succeeded" if succeeded else "failed"
    return succeeded


class DeliveryAttemptOut(CamelModel):
    id: str = Field(examples=["dlv_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    webhook_id: str = Field(validation_alias=_from_row("webhookId", "endpoint_id"), examples=[_WHK])
    event_id: str = Field(examples=[_EVT], description="Also the webhook-id header of the attempt.")
    event_type: str
    attempt: int = Field(description="1 for the first attempt of this event to this endpoint.")
    status: Annotated[Literal["succeeded", "failed"], BeforeValidator(_outcome)] = Field(
        validation_alias=_from_row("status", "succeeded"))
    status_code: int | None = Field(description="The receiver's HTTP status; null when none was received.")
    latency_ms: int | None
    response_excerpt: str | None = Field(description="The first characters of the receiver's answer.")
    error: str | None = Field(description="Why the attempt failed when no 2xx was received.")
    attempted_at: Timestamp = Field(validation_alias=_from_row("attemptedAt", "created_at"))

    @classmethod
    def of(cls, delivery: WebhookDelivery) -> DeliveryAttemptOut:
        return cls.model_validate(delivery)


class DeliveryQueued(BaseModel):
    webhookId: str = Field(examples=[_WHK])
    eventId: str = Field(examples=[_EVT])
    status: Literal["pending", "succeeded", "failed"]
    attempts: int
    nextAttemptAt: str

    @classmethod
    def of(cls, message: WebhookMessage, event_id: str) -> DeliveryQueued:
        return cls(webhookId=message.endpoint_id, eventId=event_id, status=message.status,
                   attempts=message.attempts, nextAttemptAt=rfc3339(message.next_attempt_at) or "")
