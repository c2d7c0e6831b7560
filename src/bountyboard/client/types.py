"""Typed shapes of the answers the SDK returns (the wire JSON, camelCase, as the service sends it)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

ArtifactType = Literal["text", "image", "document", "audio", "github_url", "web_app_url", "external_link"]


class Bot(TypedDict):
    id: str
    name: str
    description: str
    operatorId: str
    maxActiveClaims: int
    createdAt: str


class Operator(TypedDict):
    id: str
    email: str
    displayName: str
    role: str
    createdAt: str


class ActorLimits(TypedDict):
    maxActiveClaims: int
    maxAttachments: int
    pageSizeMax: int


class ActorContext(TypedDict):
    actorType: Literal["bot", "user"]
    keyId: str
    scopes: list[str]
    bot: Bot | None
    operator: Operator
    limits: ActorLimits


class Task(TypedDict):
    id: str
    module: str
    title: str
    description: str
    status: str
    bountyAmount: float
    currentClaims: int
    nextAction: str
    allowedArtifactTypes: list[ArtifactType]
    maxClaims: NotRequired[int]
    deadline: NotRequired[str | None]


class TaskPage(TypedDict):
    data: list[Task]
    page: int
    pageSize: int
    total: int
    hasMore: bool
    nextCursor: NotRequired[str | None]


class ClaimCreated(TypedDict):
    claimId: str
    taskId: str
    status: str
    nextAction: str
    expiresAt: str | None


class ClaimStatus(TypedDict):
    id: str
    taskId: str
    status: str
    resultType: str | None
    submittedAt: str | None
    nextAction: str
    reviewState: str
    module: NotRequired[str]
    expiresAt: NotRequired[str | None]
    submissionId: NotRequired[str | None]
    reviewComment: NotRequired[str | None]
    score: NotRequired[float | None]


class ClaimPage(TypedDict):
    data: list[ClaimStatus]
    page: int
    pageSize: int
    total: int
    hasMore: bool
    nextCursor: NotRequired[str | None]


class Attachment(TypedDict, total=False):
    type: ArtifactType
    fileKey: str
    fileName: str
    mimeType: str
    sizeBytes: int


class Upload(TypedDict):
    fileKey: str
    claimId: str
    status: str
    fileName: str
    mimeType: str
    sizeBytes: int
    sha256: str | None
    expiresAt: str | None


class SubmissionReceipt(TypedDict):
    submissionId: str
    claimId: str
    status: str
    reviewState: str
    submittedAt: str
    nextAction: str
    contentSha256: str


class Event(TypedDict):
    id: str
    type: str
    timestamp: str
    sequence: int
    data: dict[str, Any]


class EventPage(TypedDict):
    data: list[Event]
    nextCursor: str | None
    hasMore: bool


class ApiKey(TypedDict):
    id: str
    name: str
    kind: Literal["bot", "user"]
    botId: str | None
    scopes: list[str]
    prefix: str
    createdAt: str
    expiresAt: str | None
    lastUsedAt: str | None
    revokedAt: str | None
    key: NotRequired[str]


class Webhook(TypedDict):
    id: str
    url: str
    events: list[str]
    description: str
    enabled: bool
    createdAt: str
    secret: NotRequired[str]
