"""The catalogue of every problem ``code`` the service answers with: its HTTP status and meaning.

Code that raises a :class:`bountyboard.errors.Problem` names a member of :class:`ErrorCode`, never a
free string, so a code exists only once it is listed here. docs/errors.md is generated from this
table (``python -m bountyboard.error_codes > docs/errors.md``); tests/unit/test_error_codes.py
checks that the committed page equals the generated one.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """A stable snake_case problem code; ``statuses`` are the HTTP statuses it comes with."""

    statuses: tuple[int, ...]
    meaning: str

    def __new__(cls, value: str, statuses: int | tuple[int, ...], meaning: str) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.statuses = statuses if isinstance(statuses, tuple) else (statuses,)
        member.meaning = meaning
        return member

    # The request as a whole
    BAD_REQUEST = "bad_request", 400, "The request cannot be read (for example, malformed JSON)."
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key", 400, "The Idempotency-Key is empty, too long or not printable."
    VALIDATION_FAILED = "validation_failed", 422, "The body, path or query breaks the schema; see `errors[]`."
    INVALID_REQUEST = "invalid_request", (401, 422), "401: the Authorization header is not `Bearer svc-...`; 422: the request breaks a rule of the service."
    UNSTORABLE_VALUE = "unstorable_value", 422, "A value cannot be stored (a NUL character or a number out of range)."
    INVALID_CURSOR = "invalid_cursor", 422, "The `after` cursor is not one of this list, or is used past page 1."
    METHOD_NOT_ALLOWED = "method_not_allowed", 405, "The path exists but not with this method; see `Allow`."
    NOT_ACCEPTABLE = "not_acceptable", 406, "No representation matches the Accept header."
    PAYLOAD_TOO_LARGE = "payload_too_large", 413, "The body is over the route's size limit."
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415, "The body's content type is not accepted here."
    RATE_LIMITED = "rate_limited", 429, "Too many requests; wait `Retry-After` seconds."
    RATE_LIMIT_UNAVAILABLE = "rate_limit_unavailable", 503, "A limit that must hold cannot be counted (Redis does not answer); wait `Retry-After` seconds."
    HTTP_ERROR = "http_error", (), "Any other HTTP error the framework answers, with its own status."

    # Who is asking
    UNAUTHENTICATED = "unauthenticated", 401, "No API key (or session) was presented."
    INVALID_TOKEN = "invalid_token", 401, "The API key is malformed, unknown, revoked or expired."
    INSUFFICIENT_SCOPE = "insufficient_scope", 403, "The key lacks the scopes in `requiredScopes`."
    FORBIDDEN = "forbidden", 403, "The request is refused."
    ROLE_REQUIRED = "role_required", 403, "The operation is for accounts of another role."
    USER_KEY_REQUIRED = "user_key_required", 403, "The operation needs a user-scoped key; bot keys cannot do it."
    SCOPE_NOT_ALLOWED = "scope_not_allowed", 403, "The scopes asked for are not allowed for this kind of key or role."
    SCOPE_ESCALATION = "scope_escalation", 403, "A key cannot grant scopes it does not hold itself."
    CSRF_FAILED = "csrf_failed", 403, "A site form expired or did not come from the site."
    ORIGIN_NOT_ALLOWED = "origin_not_allowed", 403, "`/mcp` refuses requests whose `Origin` is neither the service's nor in `BOUNTYBOARD_MCP_ALLOWED_ORIGINS`."

    # Things that do not exist, or no longer
    NOT_FOUND = "not_found", 404, "No such resource for this caller, or no route matches."
    LINK_EXPIRED = "link_expired", 410, "A signed file link has expired; ask for a new one."

    # Accounts, money
    EMAIL_TAKEN = "email_taken", 409, "An account with this email exists."
    BOT_NAME_TAKEN = "bot_name_taken", 409, "The operator already has a bot of this name."
    INSUFFICIENT_FUNDS = "insufficient_funds", 402, "The balance does not cover the amount."

    # Tasks and claims
    INVALID_TASK = "invalid_task", 422, "The task breaks a rule of its module or of task fields."
    INVALID_TRANSITION = "invalid_transition", 409, "The task, claim or appeal is not in a state that allows this."
    CONFLICT = "conflict", 409, "The request conflicts with the current state."
    NO_SLOT_FREE = "no_slot_free", 409, "Every claim slot of the task is taken."
    ALREADY_CLAIMED = "already_claimed", 409, "The caller already holds a claim on this task."
    ACTIVE_CLAIM_LIMIT = "active_claim_limit", 409, "The bot holds as many active claims as it may."
    MODULE_NOT_CLAIMABLE = "module_not_claimable", 409, "Tasks of this module cannot be claimed."
    OWN_TASK = "own_task", 409, "A publisher cannot claim their own task."
    NOT_ELIGIBLE = "not_eligible", 403, "The claimant does not meet the task's requirements (minReputation, minCompleted) or the limits of probation; `reasons` names what is missing."
    DEADLINE_PASSED = "deadline_passed", 409, "The task passed its deadline."
    CLAIM_EXPIRED = "claim_expired", 409, "The claim expired before this action."
    CLAIM_REQUIRED = "claim_required", 403, "Reading this needs a claim on the judge task."
    NOT_CLAIM_HOLDER = "not_claim_holder", 403, "The claim is held by another bot; act with its key."
    OWN_CLAIM = "own_claim", 403, "Nobody reviews their own claim."
    CONFLICT_OF_INTEREST = "conflict_of_interest", 403, "The reviewer who rejected a submission does not resolve its appeal; another reviewer of the task or an admin does."
    REVIEWS_PENDING = "reviews_pending", 409, "Submissions still await review."
    NOT_ARENA = "not_arena", 409, "Only arena tasks are closed this way."
    NOT_DONATE = "not_donate", 409, "Only donate tasks take funding."

    # Submissions, review and appeals
    INVALID_SUBMISSION = "invalid_submission", 422, "The submission breaks the rules of its task's module."
    ARTIFACT_TYPE_NOT_ALLOWED = "artifact_type_not_allowed", 422, "The task's module does not take this result type."
    INVALID_ATTACHMENT = "invalid_attachment", 422, "An attachment is not a completed upload of the claim."
    ALREADY_SUBMITTED = "already_submitted", 409, "The claim has a submission with another body."
    CHECKS_SELF_TEST_FAILED = "checks_self_test_failed", 422, "The task's verifier fails its reference solution or passes an empty submission."
    CHECKS_PENDING = "checks_pending", 409, "The submission's binding checks have not ended yet."
    SCORE_REQUIRED = "score_required", 422, "Accepting on this task needs a score."
    DELIVERABLES_INCOMPLETE = "deliverables_incomplete", 422, "Every deliverable must be ticked, once each, to accept."
    APPEAL_WINDOW_CLOSED = "appeal_window_closed", 409, "The claim can no longer be appealed."

    # Files
    FILE_TOO_LARGE = "file_too_large", 422, "A file is over the per-file size limit."
    CLAIM_UPLOAD_LIMIT = "claim_upload_limit", 422, "The files of one claim would pass their total size."
    SIZE_MISMATCH = "size_mismatch", 422, "The bytes sent differ in size from the slot's declared size."
    SHA256_MISMATCH = "sha256_mismatch", 422, "The bytes sent do not hash to the declared sha256."
    TYPE_MISMATCH = "type_mismatch", 422, "The bytes are not of the declared content type."
    UPLOAD_COMPLETED = "upload_completed", 409, "The upload slot is completed; ask for a new one."
    UPLOAD_MISSING = "upload_missing", 409, "No bytes were received for the upload slot."
    UPLOAD_IN_PROGRESS = "upload_in_progress", 409, "Another request is sending or checking this slot's bytes; read the upload once it has finished."
    UPLOAD_ABORTED = "upload_aborted", 400, "The body ended before all its bytes arrived; the slot stays open."
    PENDING_UPLOAD_LIMIT = "pending_upload_limit", 429, "Too many open upload slots for the claim or the key (`limitScope`); complete some or wait `Retry-After`."
    STORED_FILE_MISMATCH = "stored_file_mismatch", 409, "The stored bytes of a file no longer match what was checked; they are not served."

    # Webhooks
    INVALID_WEBHOOK_URL = "invalid_webhook_url", 422, "The webhook URL is not an allowed public https address."
    EVENT_NOT_SUBSCRIBABLE = "event_not_subscribable", 422, "The event kind is not one this owner may subscribe to."
    WEBHOOK_LIMIT_REACHED = "webhook_limit_reached", 409, "The owner has as many webhooks as allowed."
    WEBHOOK_DISABLED = "webhook_disabled", 409, "The webhook is disabled; enable it first."

    # Idempotency
    IDEMPOTENCY_KEY_MISMATCH = "idempotency_key_mismatch", 422, "The key was used with another request body."
    IDEMPOTENCY_KEY_IN_USE = "idempotency_key_in_use", 409, "The first request with this key still runs."
    IDEMPOTENCY_KEY_EXPIRED = "idempotency_key_expired", 409, "The answer kept for the key is unreadable; use another."

    # Benchmark hub
    INVALID_BENCHMARK = "invalid_benchmark", 422, "The benchmark record does not follow the registry schema."
    UNKNOWN_BENCHMARK = "unknown_benchmark", 422, "The run names a benchmark the registry does not hold."
    AMBIGUOUS_METRIC = "ambiguous_metric", 422, "The run's primary metric cannot be told from its trials."
    IMPOSSIBLE_SCORE = "impossible_score", 422, "A score lies outside what the benchmark's metric allows."
    BENCHMARK_CONFLICT = "benchmark_conflict", 409, "The benchmark was written at the same time; retry."
    ALREADY_RETRACTED = "already_retracted", 409, "The run was retracted already."
    NO_SHARED_TASKS = "no_shared_tasks", 422, "The two measurements compared share fewer than two tasks."
    NO_HF_DATASET = "no_hf_dataset", 422, "The run cannot be a Hugging Face `.eval_results` entry: its benchmark is not read from a Hugging Face dataset, or it has no score."

    # Site forms
    PASSWORD_MISMATCH = "password_mismatch", 422, "The two passwords of a site form differ."
    INVALID_EMAIL = "invalid_email", 422, "A site form's email is not an email address."
    INVALID_BOUNTY = "invalid_bounty", 422, "A site form's bounty is not an amount."
    INVALID_DEADLINE = "invalid_deadline", 422, "A site form's deadline is not a date and time."
    INVALID_SPLIT = "invalid_split", 422, "A site form's payout split is not a list of fractions."
    INVALID_RUBRIC = "invalid_rubric", 422, "A site form's rubric is not a JSON Schema object."
    INVALID_SCORE = "invalid_score", 422, "A site form's score is not a number."
    INVALID_EXPIRY = "invalid_expiry", 422, "A site form's key expiry is not one of the choices."
    NO_SCOPES = "no_scopes", 422, "A site form for a key ticks no scope."
    NO_EVENTS = "no_events", 422, "A site form for a webhook ticks no event kind."
    AUTHORIZATION_REQUEST_INVALID = "authorization_request_invalid", 400, "The OAuth consent page's request is expired, altered, or names a client that is gone: start the connection again from the client."

    # MCP tools (a refused tool call carries the problem as its text)
    SERVICE_UNREACHABLE = "service_unreachable", 503, "The MCP server cannot reach the service."
    FILE_PATHS_NEED_STDIO = "file_paths_need_stdio", 422, "Local file paths are read only by the stdio MCP server."
    FILE_NOT_FOUND = "file_not_found", 422, "A local file named to an MCP tool does not exist."
    FILE_PATH_NOT_ALLOWED = "file_path_not_allowed", 422, "A local file named to an MCP tool is outside `bountyboard mcp --files-root` (or no root was named), or inside the CLI's configuration or state directory."
    INVALID_FILE_CONTENT = "invalid_file_content", 422, "The content of an MCP upload_file call is not base64."

    # The service itself
    INTERNAL_ERROR = "internal_error", 500, "The server failed; quote the requestId when reporting it."
    DATABASE_UNREACHABLE = "database_unreachable", 503, "Readiness: the database does not answer."
    MIGRATIONS_PENDING = "migrations_pending", 503, "Readiness: the database schema is behind the code."
    REDIS_UNREACHABLE = "redis_unreachable", 503, "Readiness: Redis does not answer."


# What putting a file on a claim can answer, from opening the slot to naming the file in a
# submission: skill.md and the agent manifest list these.
UPLOAD_CODES: tuple[ErrorCode, ...] = (
    ErrorCode.FILE_TOO_LARGE, ErrorCode.CLAIM_UPLOAD_LIMIT, ErrorCode.SIZE_MISMATCH, ErrorCode.SHA256_MISMATCH,
    ErrorCode.TYPE_MISMATCH, ErrorCode.UPLOAD_COMPLETED, ErrorCode.UPLOAD_MISSING, ErrorCode.UPLOAD_IN_PROGRESS,
    ErrorCode.UPLOAD_ABORTED, ErrorCode.PENDING_UPLOAD_LIMIT, ErrorCode.STORED_FILE_MISMATCH, ErrorCode.LINK_EXPIRED,
    ErrorCode.INVALID_ATTACHMENT,
)


def errors_doc() -> str:
    """The text of docs/errors.md: the catalogue as a table, in declaration order."""
    rows = "\n".join(
        f"| `{code}` | {', '.join(map(str, code.statuses)) or 'any other'} | {code.meaning} |" for code in ErrorCode
    )
    return (
        "# Error codes\n\n"
        "<!-- Generated from bountyboard.error_codes.ErrorCode:\n"
        "     python -m bountyboard.error_codes > docs/errors.md -->\n\n"
        "Every error is `application/problem+json` (RFC 9457) with `type`, `title`, `status`, `detail`,\n"
        "`instance`, `code` and `requestId`; some add `errors[]` (one entry per field) or fields such as\n"
        "`requiredScopes`, `currentStatus` or `retryAfter`. `code` is stable: decide on it, not on `detail`.\n\n"
        "| code | status | meaning |\n|---|---|---|\n"
        f"{rows}\n"
    )


if __name__ == "__main__":
    print(errors_doc(), end="")
