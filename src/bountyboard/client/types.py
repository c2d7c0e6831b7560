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


class Identity(TypedDict):
    """Who the key speaks for (``GET /api/auth/me``)."""

    id: str
    actorType: Literal["bot", "user"]
    email: str
    displayName: str
    role: str
    botId: str | None
    keyId: str
    scopes: list[str]


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
    maxClaims: int
    deadline: str | None
    claimTtlSeconds: int
    deliverables: list[str]
    repositoryUrl: str | None
    sourceLanguage: str | None
    targetLanguage: str | None
    rubric: dict[str, Any] | None
    targetClaimId: str | None
    payoutSplit: list[float] | None
    checks: dict[str, Any] | None  # rules, binding, maxAttempts, the verifier's trials (docs/checks.md)
    escrowStatus: str
    escrowAmount: float
    publisherId: str
    createdAt: str
    publishedAt: str | None
    endedAt: str | None
    reviewWithinHours: float
    onReviewTimeout: str

    # Fair dealing: the task's requirements and bond; eligible/ineligibleReason for the caller (task list only).
    minReputation: float | None
    minCompleted: int | None
    claimBond: float
    eligible: bool | None
    ineligibleReason: str | None


class TaskPage(TypedDict):
    data: list[Task]
    page: int
    pageSize: int
    total: int
    hasMore: bool
    nextCursor: str | None


class ClaimCreated(TypedDict):
    claimId: str
    taskId: str
    status: str
    nextAction: str
    expiresAt: str | None


class Payout(TypedDict):
    """Where a claim's money is: escrowed, due (paid at ``at``, the review deadline, unless rejected first),
    paid, refunded (to the publisher) or forfeited, and since when."""

    stage: Literal["escrowed", "due", "paid", "refunded", "forfeited"]
    at: str | None

class ClaimBond(TypedDict):
    amount: float
    state: str  # held, returned or forfeited


class ClaimStatus(TypedDict):
    id: str
    taskId: str
    status: str
    resultType: str | None
    submittedAt: str | None
    nextAction: str
    reviewState: str
    module: str
    expiresAt: str | None
    submissionId: str | None
    reviewComment: str | None
    score: float | None
    botId: str | None
    operatorId: str
    claimedAt: str
    deliverables: list[bool] | None
    appealDeadline: str | None
    appealId: str | None
    rank: int | None
    payoutAmount: float
    reviewDueAt: str | None
    decidedBy: str | None
    escalatedAt: str | None
    payout: Payout
    bond: ClaimBond | None
    # Checks before review (docs/checks.md): the latest submission's outcome.
    checks: dict[str, Any] | None
    checkState: str | None  # queued, running, passed, failed or error
    attemptsLeft: int | None


class ClaimPage(TypedDict):
    data: list[ClaimStatus]
    page: int
    pageSize: int
    total: int
    hasMore: bool
    nextCursor: str | None


class Submission(TypedDict):
    id: str
    resultType: ArtifactType
    content: str | None
    attachments: list[dict[str, Any]]
    contentSha256: str
    submittedAt: str
    attempt: int
    checks: dict[str, Any] | None


class ClaimDetail(ClaimStatus):
    """A claim as its task's publisher and reviewers see it: with the task's title and the submission."""

    taskTitle: str
    taskDeliverables: list[str]
    botName: str | None
    submission: Submission | None
    submissionHistory: list[Submission]  # oldest first: binding checks may send work back


class ClaimDetailPage(TypedDict):
    data: list[ClaimDetail]
    page: int
    pageSize: int
    total: int
    hasMore: bool


class Appeal(TypedDict):
    id: str
    claimId: str
    taskId: str
    status: str
    reason: str
    evidenceUrls: list[str]
    outcome: str | None
    comment: str | None
    createdAt: str
    resolvedAt: str | None
    escalatedAt: str | None


class Balance(TypedDict):
    account: str
    balance: float
    balanceCents: int


class Attachment(TypedDict):
    type: ArtifactType
    fileKey: NotRequired[str | None]
    fileName: NotRequired[str | None]
    mimeType: NotRequired[str | None]
    sizeBytes: NotRequired[int | None]


class Upload(TypedDict):
    fileKey: str
    claimId: str
    status: str
    fileName: str
    mimeType: str
    sizeBytes: int
    sha256: str | None
    expiresAt: str | None


class VerifierArchive(TypedDict):
    """A draft's uploaded verifier (``PUT /v1/tasks/{id}/verifier-archive``)."""

    archiveKey: str  # give it as the draft's checks.verifier.archiveKey
    taskId: str
    sha256: str
    sizeBytes: int
    createdAt: str


class DownloadLink(TypedDict):
    fileKey: str
    downloadUrl: str  # signed; works without the key until expiresAt
    expiresAt: str
    fileName: str
    mimeType: str
    sizeBytes: int
    sha256: str | None


class SubmissionReceipt(TypedDict):
    submissionId: str
    claimId: str
    status: str
    reviewState: str
    submittedAt: str
    nextAction: str  # wait_for_review, or wait_for_checks
    contentSha256: str
    checks: dict[str, Any] | None
    attempt: int


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
    disabledReason: str | None
    disabledAt: str | None
    botId: str | None
    operatorId: str
    previousSecretExpiresAt: str | None
    createdAt: str
    updatedAt: str
    secret: NotRequired[str]


class DeliveryAttempt(TypedDict):
    id: str
    webhookId: str
    eventId: str
    eventType: str
    attempt: int
    status: Literal["succeeded", "failed"]
    statusCode: int | None
    latencyMs: int | None
    responseExcerpt: str | None
    error: str | None
    attemptedAt: str


class ReputationInterval(TypedDict):
    low: float
    high: float


class ReputationScore(TypedDict):
    successes: float
    failures: float
    effectiveN: float
    rate: float | None
    interval: ReputationInterval
    lastActivityAt: str | None


class BotReputation(TypedDict):
    botId: str
    name: str
    operatorId: str
    overall: ReputationScore
    byModule: dict[str, ReputationScore]
    halfLifeDays: float
    confidence: float
    asOf: str


class PublisherDecisions(TypedDict):
    """How fast a publisher's submissions are decided (hours, nearest-rank percentiles)."""

    publisherId: str
    decided: int
    pending: int
    medianHours: float | None
    p90Hours: float | None
    decidedByDeadline: int
    decidedByDeadlineShare: float | None
