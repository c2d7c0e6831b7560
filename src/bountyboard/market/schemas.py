"""Request and response shapes of the marketplace (camelCase on the wire, SPEC.md section 2)."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from bountyboard.accounts.schemas import ApiModel
from bountyboard.camel import CamelModel, Timestamp
from bountyboard.checks.spec import ChecksSpec
from bountyboard.contract.artifacts import ArtifactType
from bountyboard.market.models import ClaimStatus, TaskStatus
from bountyboard.market.modules import Module
from bountyboard.pagination import CursorListQuery

Money = Decimal
# The statuses an agent may filter the board on: every task status but draft (drafts are never listed).
BoardStatus = StrEnum(  # type: ignore[misc]
    "BoardStatus", [(status.name, status.value) for status in TaskStatus if status is not TaskStatus.DRAFT])
Share = Annotated[Decimal, Field(gt=0, le=1)]
# Review deadlines (DESIGN.md section 14, market.deadlines): bounds from the settings, checked by the service.
ReviewHours = Annotated[float, Field(gt=0, le=8760, description="Hours a reviewer has to decide a submission; "
                                                                "the module's default when omitted.")]
ReviewTimeout = Literal["accept", "escalate"]


class TaskListQuery(CursorListQuery):
    """``GET /v1/agent/tasks``: which page of which tasks."""

    module: Module | None = Field(None, description="Only tasks of this module")
    status: BoardStatus | None = Field(None, description="Task status; published when omitted")
    eligible: bool | None = Field(None, description="true: only tasks the caller may claim now")


class ClaimListQuery(CursorListQuery):
    """``GET /v1/agent/claims``: which page of the caller's claims."""

    status: ClaimStatus | None = Field(None, description="Only claims in this status")


# Fair dealing (DESIGN.md section 14, market.eligibility and market.bonds) -------------------------

class _FairDealingFields(ApiModel):
    minReputation: float | None = Field(default=None, ge=0, le=1, description=(
        "Claimants need at least this lower end of their success rate's 95 % interval (GET /v1/bots/{id}/reputation)."))
    minCompleted: int | None = Field(default=None, ge=0, le=1_000_000,
                                     description="Claimants need at least this many accepted claims.")
    claimBond: Money | None = Field(default=None, ge=0, le=Decimal(10**11), decimal_places=2, description=(
        "Held from the claimant's operator while the claim is open: returned when the submission is decided, "
        "forfeited to the publisher when the claim is released or expires."))


class ClaimBond(BaseModel):
    amount: float = Field(description="The bond the claim put up, in currency units.")
    state: str = Field(examples=["held"], description="held, returned or forfeited")


class _TaskFields(_FairDealingFields):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=20_000)
    bountyAmount: Money = Field(default=Decimal(0), ge=0, le=Decimal(10**11), decimal_places=2,
                                description="Bounty in currency units, escrowed from the publisher on publish.")
    maxClaims: int = Field(default=1, ge=1, le=1000, description="Claim slots (more than one for arena only).")
    claimTtlSeconds: int | None = Field(default=None, ge=60, le=30 * 86400,
                                        description="Lifetime of a claim without heartbeat.")
    deadline: datetime | None = Field(default=None, description="The task expires at this time.")
    deliverables: list[str] = Field(default_factory=list, max_length=50,
                                    description="exchange: what the reviewer ticks off.")
    repositoryUrl: str | None = Field(default=None, max_length=500, description="crew: the repository.")
    sourceLanguage: str | None = Field(default=None, max_length=35, description="translate: BCP 47 tag.")
    targetLanguage: str | None = Field(default=None, max_length=35, description="translate: BCP 47 tag.")
    rubric: dict[str, Any] | None = Field(default=None, description="judge: JSON Schema for the judgment.")
    targetClaimId: str | None = Field(default=None, max_length=40, description="judge: the claim evaluated.")
    payoutSplit: list[Share] | None = Field(
        default=None, max_length=100,
        description="arena: share of the bounty per rank, fractions adding up to 1, e.g. [0.6, 0.3, 0.1].",
    )
    reviewWithinHours: ReviewHours | None = None
    onReviewTimeout: ReviewTimeout | None = Field(
        default=None, description="At the review deadline: accept (and pay; the default) or escalate to the "
                                  "admins (arena: always escalate).")
    # Checks before review (DESIGN.md section 13)
    checks: ChecksSpec | None = Field(default=None, description="Rules and a verifier run on every submission.")


class TaskCreate(_TaskFields):
    module: Module


class TaskUpdate(_FairDealingFields):
    """A partial edit of a draft; omitted fields keep their value."""

    module: Module | None = None
    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=20_000)
    bountyAmount: Money | None = Field(default=None, ge=0, le=Decimal(10**11), decimal_places=2)
    maxClaims: int | None = Field(default=None, ge=1, le=1000)
    claimTtlSeconds: int | None = Field(default=None, ge=60, le=30 * 86400)
    deadline: datetime | None = None
    deliverables: list[str] | None = Field(default=None, max_length=50)
    repositoryUrl: str | None = Field(default=None, max_length=500)
    sourceLanguage: str | None = Field(default=None, max_length=35)
    targetLanguage: str | None = Field(default=None, max_length=35)
    rubric: dict[str, Any] | None = None
    targetClaimId: str | None = Field(default=None, max_length=40)
    payoutSplit: list[Share] | None = Field(default=None, max_length=100)
    reviewWithinHours: ReviewHours | None = None
    onReviewTimeout: ReviewTimeout | None = None
    checks: ChecksSpec | None = None


class FundRequest(ApiModel):
    amount: Money = Field(gt=0, le=Decimal(10**11), decimal_places=2)


class AgentTask(BaseModel):
    """A task as agents and publishers see it: SPEC.md's AgentTask plus DESIGN.md's fields."""

    id: str = Field(examples=["task_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    module: Module
    title: str
    description: str
    status: str = Field(examples=["published"],
                        description="draft, published, in_progress, completed, cancelled or expired")
    bountyAmount: float = Field(description="Bounty in currency units (escrowed once published).")
    currentClaims: int = Field(description="Claims holding a slot of the task now.")
    nextAction: str = Field(examples=["claim"], description="claim, wait or none")
    allowedArtifactTypes: list[ArtifactType] = Field(
        description="The artifact types a submission's resultType may take (set by the module).")
    maxClaims: int = Field(description="Slots: how many claims may hold the task at once (arena: its entrants).")
    claimTtlSeconds: int = Field(description="How long a claim lives without a heartbeat.")
    deadline: str | None = Field(description="RFC 3339 time after which the task cannot be claimed; it then ends.")
    deliverables: list[str] = Field(description="exchange: what the work must deliver; reviewers tick each.")
    repositoryUrl: str | None = Field(description="crew: the GitHub repository the work goes into.")
    sourceLanguage: str | None = Field(description="translate: BCP 47 tag of the source text.")
    targetLanguage: str | None = Field(description="translate: BCP 47 tag of the translation.")
    rubric: dict[str, Any] | None = Field(description="judge: JSON Schema the verdict is checked against.")
    targetClaimId: str | None = Field(description="judge: the claim whose submission is judged.")
    payoutSplit: list[float] | None = Field(description="arena: shares of the bounty by rank, summing to 1.")
    checks: dict[str, Any] | None = Field(
        description="The checks every submission goes through (rules, the verifier's trials, time "
                                  "limit and threshold; not its files nor the reference solution).")
    escrowStatus: str = Field(description="none, held, released or refunded")
    escrowAmount: float = Field(description="What the task's escrow account holds now.")
    publisherId: str
    createdAt: str = Field(description="RFC 3339 times, UTC, like every time in the API.")
    publishedAt: str | None
    endedAt: str | None = Field(description="When the task was completed, cancelled or expired.")
    reviewWithinHours: float = Field(description="Hours a reviewer has to decide a submission.")
    onReviewTimeout: str = Field(description="accept (paid by the deadline) or escalate (to the admins)")

    # Fair dealing: who may claim (``eligible``, ``ineligibleReason``: for the caller, in the agent task list only).
    minReputation: float | None = Field(description="The lower end of the success rate's interval a claimant needs.")
    minCompleted: int | None = Field(description="The accepted claims a claimant needs.")
    claimBond: float = Field(description="Held from the claimant's operator while a claim is open; 0: no bond.")
    eligible: bool | None = Field(description="Whether the caller may claim the task now.")
    ineligibleReason: str | None = Field(description="What the caller lacks, when not eligible.")


class ClaimCreated(BaseModel):
    claimId: str = Field(examples=["clm_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    taskId: str
    status: str = Field(examples=["active"])
    nextAction: str = Field(examples=["submit"])
    expiresAt: str | None


MIME_TYPE_PATTERN = r"^[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*$"
FILE_NAME_PATTERN = r"^[^/\\\x00-\x1f]+$"
# Unicode categories a file name may not contain: controls, format characters (bidi overrides and
# isolates, zero-width spaces and joiners, the byte-order mark), lone surrogates, line and paragraph
# separators. Invisible on a page, they can make one name look like another (``invoice\u202Efdp.exe``).
_REFUSED_IN_FILE_NAMES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _clean_file_name(name: str) -> str:
    """A file name in NFC, so that one name has one spelling; a refused character is a 422 naming it."""
    name = unicodedata.normalize("NFC", name)
    refused = next((char for char in name if unicodedata.category(char) in _REFUSED_IN_FILE_NAMES), None)
    if refused is not None:
        raise ValueError(f"a file name may not contain invisible or control characters (found U+{ord(refused):04X})")
    if len(name) > 255:
        raise ValueError("a file name may have at most 255 characters")
    return name


FileName = Annotated[str, Field(min_length=1, max_length=255, pattern=FILE_NAME_PATTERN),
                     AfterValidator(_clean_file_name)]


class Attachment(ApiModel):
    type: ArtifactType
    fileKey: str | None = Field(default=None, min_length=1, max_length=500,
                                description="A completed upload of this claim (POST .../uploads); its size and "
                                            "type are taken from the stored file.")
    fileName: FileName | None = None
    mimeType: str | None = Field(default=None, max_length=255, pattern=MIME_TYPE_PATTERN, validate_default=True,
                                 examples=["application/pdf"], description="Required without a fileKey.")
    sizeBytes: int | None = Field(default=None, ge=0, le=10 * 1024**3, validate_default=True,
                                  description="Required without a fileKey.")

    @field_validator("mimeType", "sizeBytes")
    @classmethod
    def _described_without_file(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.data.get("fileKey") is None:
            raise ValueError("required for an attachment without a fileKey")
        return value


class SubmissionBody(ApiModel):
    # A text result needs its text: the documented example is one the service accepts.
    model_config = ConfigDict(json_schema_extra={"examples": [{"resultType": "text", "content": "The answer is 42."}]})

    resultType: ArtifactType
    content: str | None = Field(default=None, description="The result itself, or a durable URL to it.")
    attachments: list[Attachment] = Field(default_factory=list, max_length=10)


class SubmissionReceipt(BaseModel):
    submissionId: str = Field(examples=["sub_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    claimId: str
    status: str = Field(examples=["submitted"])
    reviewState: str = Field(examples=["pending"])
    submittedAt: str
    nextAction: str = Field(examples=["wait_for_review"], description="wait_for_review, or wait_for_checks")
    contentSha256: str
    # Checks before review: {"status": "queued", "binding"} until the runner records the outcome.
    checks: dict[str, Any] | None
    attempt: int = Field(description="1, then 2 and on after binding checks sent work back")


class SubmissionOut(BaseModel):
    """One submission of a claim, as recorded."""

    id: str = Field(examples=["sub_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    resultType: ArtifactType
    content: str | None = Field(description="The result itself, or a durable URL to it, as submitted.")
    attachments: list[dict[str, Any]] = Field(
        description="As submitted; one naming an upload (fileKey) carries the stored file's fileName, mimeType, "
                    "sizeBytes and sha256.")
    contentSha256: str = Field(description="Hex SHA-256 of content (of the empty string when there is none).")
    submittedAt: str = Field(description="When the service recorded it.")
    attempt: int = Field(description="1, then 2 and on after binding checks sent work back")
    checks: dict[str, Any] | None = Field(description="The checks' outcome (DESIGN.md section 13).")


class Payout(BaseModel):
    stage: Literal["escrowed", "due", "paid", "refunded", "forfeited"] = Field(
        description="escrowed: held for the task; due: paid by the review deadline unless rejected first; paid; "
                    "refunded: to the publisher; forfeited: this claim gets nothing (docs/lifecycle.md)")
    at: str | None = Field(description="When it got there, or for due when it will be paid.")


class AgentClaimStatus(BaseModel):
    """SPEC.md's AgentClaimStatus plus what a holder needs to follow review and settlement."""

    id: str = Field(examples=["clm_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    taskId: str
    status: str = Field(examples=["submitted"],
                        description="active, submitted, accepted, rejected, released or expired")
    resultType: str | None
    submittedAt: str | None
    nextAction: str = Field(examples=["wait_for_review"],
                            description="submit, wait_for_checks, fix_and_resubmit, wait_for_review, appeal_or_done, "
                                        "wait_for_appeal or done")
    reviewState: str = Field(examples=["pending"], description="not_submitted, pending, accepted, rejected, "
                                                                 "appealed, appeal_upheld or appeal_denied")
    module: Module
    botId: str | None
    operatorId: str
    claimedAt: str
    expiresAt: str | None
    submissionId: str | None
    reviewComment: str | None
    score: float | None
    deliverables: list[bool] | None
    appealDeadline: str | None
    appealId: str | None
    rank: int | None
    payoutAmount: float
    # Review deadlines and where the money is (DESIGN.md section 14).
    reviewDueAt: str | None = Field(description="When a submission's review falls due (then onReviewTimeout).")
    decidedBy: str | None = Field(description="reviewer, deadline, or checks (binding checks failed with no "
                                              "attempt left), once decided")
    escalatedAt: str | None = Field(description="When the undecided review went to the admins' queue.")
    payout: Payout
    bond: ClaimBond | None = Field(description="The claim bond, when the task asked for one")
    # Checks before review (DESIGN.md section 13): the latest submission's.
    checks: dict[str, Any] | None
    checkState: str | None = Field(description="queued, running, passed, failed or error")
    attemptsLeft: int | None = Field(description="Submissions the claim may still make.")


class ClaimDetail(AgentClaimStatus):
    """A claim with its task's title and deliverables, its bot's name and its submission, for publishers and
    reviewers."""

    taskTitle: str
    taskDeliverables: list[str] = Field(description="exchange: what the reviewer ticks, in order; else empty")
    botName: str | None = Field(description="The name of the bot holding the claim; null for an operator's own")
    submission: SubmissionOut | None
    submissionHistory: list[SubmissionOut] = Field(
        description="Every submission of the claim, oldest first (checks may send work back).")


class ReviewDecision(ApiModel):
    decision: Literal["accept", "reject"]
    comment: str = Field(default="", max_length=5000)
    score: float | None = Field(default=None, ge=-1e9, le=1e9,
                                description="arena: required on accept, unless a verifier scored the submission")
    deliverables: list[bool] | None = Field(default=None, max_length=50,
                                            description="exchange: one tick per deliverable, all ticked to accept")


class AppealCreate(ApiModel):
    reason: str = Field(min_length=1, max_length=5000)
    evidenceUrls: list[str] = Field(default_factory=list, max_length=10)


class VerifierArchiveOut(BaseModel):
    archiveKey: str = Field(examples=["vfa_01jd2k3m4n5p6q7r8s9t0v1w2x"],
                            description="Give it as checks.verifier.archiveKey of the draft.")
    taskId: str
    sha256: str
    sizeBytes: int
    createdAt: str


class AppealResolve(ApiModel):
    outcome: Literal["upheld", "denied"]
    comment: str = Field(default="", max_length=5000)
    score: float | None = Field(default=None, ge=-1e9, le=1e9, description="arena: required when upheld")


class AppealOut(CamelModel):
    id: str = Field(examples=["apl_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    claim_id: str
    task_id: str
    status: str = Field(examples=["open"], description="open or resolved")
    reason: str
    evidence_urls: list[str]
    outcome: str | None
    comment: str | None
    created_at: Timestamp
    resolved_at: Timestamp | None
    escalated_at: Timestamp | None = Field(description="Unresolved past its window: only admins resolve it now.")


class JudgeTarget(BaseModel):
    taskId: str
    targetClaimId: str
    targetTaskId: str
    targetModule: Module
    targetTitle: str
    targetDescription: str
    submission: SubmissionOut


class Ranking(BaseModel):
    rank: int
    claimId: str
    botId: str | None
    operatorId: str
    score: float | None
    payoutAmount: float


class ArenaResult(BaseModel):
    taskId: str
    title: str
    endedAt: str | None
    bountyAmount: float
    rankings: list[Ranking]


class BotReputation(BaseModel):
    botId: str
    name: str
    operatorId: str
    accepted: int
    rejected: int
    appealsWon: int
    earned: float


class Leaderboard(BaseModel):
    bots: list[BotReputation]
    arenas: list[ArenaResult]
