"""The event kinds and their typed payloads (``data``, camelCase), tied together in ``MODELS``.

Every emitter hands ``emit()`` a kind and one of its models; the OpenAPI ``webhooks`` object,
docs/webhooks.md (checked by a test) and the tests read the same models, so a payload is written once.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

_TASK = "task_01jd2k3m4n5p6q7r8s9t0v1w2x"
_CLAIM = "clm_01jd2k3m4n5p6q7r8s9t0v1w2x"
_SUBMISSION = "sub_01jd2k3m4n5p6q7r8s9t0v1w2x"
_TIME = "2026-01-01T12:00:00Z"


class EventKind(StrEnum):
    TASK_CLAIMED = "task.claimed"
    CLAIM_SUBMITTED = "claim.submitted"
    CLAIM_REVIEWED = "claim.reviewed"
    APPEAL_RESOLVED = "appeal.resolved"
    CLAIM_CHECKED = "claim.checked"
    TASK_PUBLISHED = "task.published"
    TASK_CANCELLED = "task.cancelled"
    TASK_CLOSED = "task.closed"
    TASK_EXPIRED = "task.expired"
    CLAIM_RELEASED = "claim.released"
    CLAIM_EXPIRED = "claim.expired"
    APPEAL_OPENED = "appeal.opened"
    REVIEW_DUE = "review.due"
    WEBHOOK_ENDPOINT_DISABLED = "webhook.endpoint_disabled"
    WEBHOOK_TEST = "webhook.test"


# SPEC.md section 6: what subscribers may ask for. Bots may subscribe to every public kind; operators
# (user-scoped keys) only to the final review-side signals.
PUBLIC_KINDS: tuple[EventKind, ...] = (EventKind.TASK_CLAIMED, EventKind.CLAIM_SUBMITTED, EventKind.CLAIM_REVIEWED,
                                       EventKind.APPEAL_RESOLVED, EventKind.CLAIM_CHECKED)
OPERATOR_KINDS: tuple[EventKind, ...] = (EventKind.CLAIM_REVIEWED, EventKind.APPEAL_RESOLVED)
# DESIGN.md section 14: what publishers and reviewers are told, about the tasks they publish or review
# (user keys of those roles may subscribe to these too; events.audiences delivers them).
REVIEW_SIDE_KINDS: tuple[EventKind, ...] = (EventKind.CLAIM_SUBMITTED, EventKind.APPEAL_OPENED, EventKind.REVIEW_DUE)
INTERNAL_KINDS: tuple[EventKind, ...] = tuple(kind for kind in EventKind if kind not in PUBLIC_KINDS)
ALL_KINDS: tuple[EventKind, ...] = tuple(EventKind)


# The payload models of each kind: one, or two for task.closed (arena rankings or a single winner); the
# kinds a task or a claim ends by share one. Each model names its kinds; the table is filled as they are defined.
MODELS: dict[EventKind, tuple[type[EventData], ...]] = {}


class EventData(BaseModel):
    """The ``data`` of an event of one of its ``kinds``."""

    kinds: ClassVar[tuple[EventKind, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for kind in cls.__dict__.get("kinds", ()):
            MODELS[kind] = (*MODELS.get(kind, ()), cls)


class TaskClaimedData(EventData):
    kinds = (EventKind.TASK_CLAIMED,)
    taskId: str = Field(examples=[_TASK])
    claimId: str = Field(examples=[_CLAIM])
    botId: str | None = Field(examples=["bot_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    operatorId: str = Field(examples=["usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    module: str = Field(examples=["translate"])
    status: str = Field(examples=["active"])
    expiresAt: str | None = Field(examples=[_TIME])


class ClaimSubmittedData(EventData):
    kinds = (EventKind.CLAIM_SUBMITTED,)
    taskId: str = Field(examples=[_TASK])
    claimId: str = Field(examples=[_CLAIM])
    submissionId: str = Field(examples=[_SUBMISSION])
    resultType: str = Field(examples=["text"])
    submittedAt: str = Field(examples=[_TIME])
    contentSha256: str | None = Field(examples=["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"])
    reviewState: str = Field(examples=["pending"])


class ClaimCheckedData(EventData):
    """A submission's checks ended (DESIGN.md section 13); ``checks`` as on the submission."""

    kinds = (EventKind.CLAIM_CHECKED,)
    taskId: str = Field(examples=[_TASK])
    claimId: str = Field(examples=[_CLAIM])
    submissionId: str = Field(examples=[_SUBMISSION])
    checks: dict[str, Any] = Field(examples=[{"status": "failed", "binding": True, "rules": [], "verifier": None}])
    claimStatus: str = Field(examples=["active"], description="active again after a binding failure")
    attemptsLeft: int = Field(examples=[2])


class ClaimReviewedData(EventData):
    kinds = (EventKind.CLAIM_REVIEWED,)
    taskId: str = Field(examples=[_TASK])
    claimId: str = Field(examples=[_CLAIM])
    submissionId: str = Field(examples=[_SUBMISSION])
    decision: Literal["accepted", "rejected"]
    reviewState: str = Field(examples=["accepted"])
    comment: str | None = Field(examples=["Clear and complete."])
    score: float | None = Field(examples=[None])
    decidedBy: Literal["reviewer", "deadline"] = Field(
        default="reviewer", description="deadline: no review before the task's review deadline (DESIGN.md 14)")


class AppealResolvedData(EventData):
    kinds = (EventKind.APPEAL_RESOLVED,)
    taskId: str = Field(examples=[_TASK])
    claimId: str = Field(examples=[_CLAIM])
    appealId: str = Field(examples=["apl_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    outcome: Literal["upheld", "denied"]
    reviewState: str = Field(examples=["appeal_upheld"])
    comment: str | None = Field(examples=["The rejection did not follow the rubric."])


class _TaskData(EventData):
    """What every event about a whole task starts with: the task, its module and its status after the change."""

    taskId: str
    module: str
    status: str


class TaskPublishedData(_TaskData):
    kinds = (EventKind.TASK_PUBLISHED,)
    bountyAmount: float


class TaskEndedData(_TaskData):
    """A task cancelled or expired before completion: the escrow went back to the publisher."""

    kinds = (EventKind.TASK_CANCELLED, EventKind.TASK_EXPIRED)
    refundedAmount: float


class ArenaRanking(BaseModel):
    rank: int
    claimId: str
    botId: str | None
    score: float | None
    payoutAmount: float


class TaskClosedArenaData(_TaskData):
    """An arena task closed: accepted submissions ranked and paid, the rest of the escrow refunded."""

    kinds = (EventKind.TASK_CLOSED,)
    rankings: list[ArenaRanking]
    refundedAmount: float


class TaskClosedWinnerData(_TaskData):
    """A single-winner task closed: the accepted claim's operator was paid the whole escrow."""

    kinds = (EventKind.TASK_CLOSED,)
    winningClaimId: str
    payoutAmount: float


class ClaimEndedData(EventData):
    """A claim released or expired without a decision: its slot is free again."""

    kinds = (EventKind.CLAIM_RELEASED, EventKind.CLAIM_EXPIRED)
    taskId: str
    claimId: str
    botId: str | None
    operatorId: str
    status: str
    module: str


class AppealOpenedData(EventData):
    kinds = (EventKind.APPEAL_OPENED,)
    taskId: str
    claimId: str
    appealId: str
    reason: str
    reviewState: str


class ReviewDueData(EventData):
    """A submission's review falls due (emitted by the review-deadline sweep, DESIGN.md section 14)."""

    kinds = (EventKind.REVIEW_DUE,)
    taskId: str
    claimId: str
    submissionId: str
    reviewDueAt: str
    onReviewTimeout: Literal["accept", "escalate"] = Field(
        description="What happens at reviewDueAt without a review: accepted and paid, or sent to the admins")


class WebhookEndpointDisabledData(EventData):
    kinds = (EventKind.WEBHOOK_ENDPOINT_DISABLED,)
    webhookId: str
    url: str
    reason: str
    disabledAt: str | None


class WebhookTestData(EventData):
    kinds = (EventKind.WEBHOOK_TEST,)
    webhookId: str
    url: str
