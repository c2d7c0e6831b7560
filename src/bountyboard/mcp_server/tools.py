"""The MCP tools: one table that both transports serve and the manifest and skill.md publish.

Each tool is a thin call of one REST operation through the SDK (:class:`~bountyboard.client.AsyncClient`),
so scopes, idempotency, validation and errors are those of the REST API. A tool answers the REST
JSON as structured content, described by the REST operation's own response model; a refusal is a
tool result marked as an error whose text is the problem JSON (``code``, ``detail``,
``requiredScopes`` ...).

To add a tool: write its function here and add a :class:`ToolSpec` to :data:`TOOLS`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol, cast

import anyio
import httpx
from fastapi.routing import APIRoute
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bountyboard.client import ApiError, AsyncClient, InvalidIdError, attachment_of
from bountyboard.client.calls import fingerprint, submission_body
from bountyboard.config import get_settings
from bountyboard.contract.artifacts import ArtifactType
from bountyboard.errors import ErrorCode
from bountyboard.market.models import TaskStatus
from bountyboard.market.modules import Module
from bountyboard.market.schemas import Attachment
from bountyboard.mcp_server.files import FileRefused, LocalFiles

# Opens a client of the REST API acting for the caller of one request (None: an anonymous caller).
Connect = Callable[[Context | None], AbstractAsyncContextManager[AsyncClient]]


class ConnectingServer(Protocol):
    connect: Connect
    # The local files submit_result may read by name; None where the server does not run beside its caller.
    files: LocalFiles | None


TaskId = Annotated[str, Field(description="A task id (task_...), as list_tasks answered it")]
ClaimId = Annotated[str, Field(description="A claim id (clm_...), as claim_task answered it")]


def _text(value: Any) -> list[TextContent]:
    return [TextContent(type="text", text=json.dumps(value))]


def _refused(status: int, code: ErrorCode, detail: str, **extra: Any) -> CallToolResult:
    """A refusal the MCP server answers itself, shaped like the REST API's problems."""
    return CallToolResult(content=_text({"status": status, "code": code, "detail": detail, **extra}), is_error=True)


async def _call(ctx: Context, work: Callable[[AsyncClient], Awaitable[Any]]) -> CallToolResult:
    connect = cast(ConnectingServer, ctx.mcp_server).connect
    try:
        async with connect(ctx) as client:
            answer = await work(client)
    except ApiError as error:
        # The text is the problem JSON alone (a raised ToolError would get a prefix).
        return CallToolResult(content=_text(error.problem), is_error=True)
    except InvalidIdError as error:  # refused by the SDK before any request
        return _refused(422, ErrorCode.VALIDATION_FAILED, str(error),
                        errors=[{"field": error.parameter, "message": str(error)}])
    except httpx.TransportError as error:
        return _refused(503, ErrorCode.SERVICE_UNREACHABLE,
                        f"The service did not answer ({type(error).__name__}); repeat the same call later.")
    return CallToolResult(content=_text(answer), structured_content=answer)


def submission_idempotency_key(claim_id: str, body: dict[str, Any]) -> str:
    """The Idempotency-Key of a submit_result call: a digest of the claim id and the body, so the same
    call repeated (after a lost answer, by a restarted client) replays the first receipt."""
    return "mcp-submit-" + hashlib.sha256(f"{claim_id}:{fingerprint(body)}".encode()).hexdigest()[:40]


async def list_tasks(
    ctx: Context,
    module: Annotated[Module | None, Field(description="Only tasks of this module")] = None,
    status: Annotated[TaskStatus | None, Field(description="Task status; published when omitted")] = None,
    page: Annotated[int | None, Field(ge=1, description="1-based page number (when not using after)")] = None,
    after: Annotated[str | None, Field(description="nextCursor of the previous answer, when the list offers one")]
    = None,
    eligible: Annotated[bool, Field(description="true: only tasks you may claim now (your track record meets "
                                                "their minReputation and minCompleted, and probation allows)")]
    = False,
) -> CallToolResult:
    return await _call(ctx, lambda client: client.list_tasks(module=module, status=status, page=page, after=after,
                                                             eligible=eligible))


async def get_task(ctx: Context, task_id: TaskId) -> CallToolResult:
    return await _call(ctx, lambda client: client.get_task(task_id))


async def claim_task(ctx: Context, task_id: TaskId) -> CallToolResult:
    return await _call(ctx, lambda client: client.claim(task_id))


def _on_claim(name: str, act: Callable[[AsyncClient, str], Awaitable[Any]]) -> Callable[..., Awaitable[CallToolResult]]:
    """The tool ``name`` that is one SDK call on one claim."""
    async def tool(ctx: Context, claim_id: ClaimId) -> CallToolResult:
        return await _call(ctx, lambda client: act(client, claim_id))

    tool.__name__ = tool.__qualname__ = name
    return tool


get_claim_status = _on_claim("get_claim_status", AsyncClient.claim_status)


async def get_bot_reputation(ctx: Context, bot_id: Annotated[str, Field(description="A bot id (bot_...)")]
                             ) -> CallToolResult:
    return await _call(ctx, lambda client: client.reputation(bot_id))


async def get_publisher_decisions(
        ctx: Context, publisher_id: Annotated[str, Field(description="A task's publisherId (usr_...)")]
) -> CallToolResult:
    return await _call(ctx, lambda client: client.publisher_decisions(publisher_id))


heartbeat_claim = _on_claim("heartbeat_claim", AsyncClient.heartbeat)
release_claim = _on_claim("release_claim", AsyncClient.release)


async def submit_result(
    ctx: Context,
    claim_id: ClaimId,
    result_type: Annotated[ArtifactType, Field(description="One of the task's allowedArtifactTypes")],
    content: Annotated[str | None, Field(description="The result, or a durable absolute URL for URL types")] = None,
    attachments: Annotated[list[Attachment] | None, Field(description="Uploaded files of the claim")] = None,
    file_paths: Annotated[list[str] | None, Field(
        max_length=10, description="Local files to upload and attach, each typed from its bytes: bountyboard mcp "
                                   "over stdio only, under its --files-root (names relative to it)")] = None,
) -> CallToolResult:
    described = [cast(Any, item.model_dump(exclude_none=True)) for item in attachments or []]
    files = cast(ConnectingServer, ctx.mcp_server).files
    if file_paths and files is None:
        return _refused(422, ErrorCode.FILE_PATHS_NEED_STDIO,
                        "This server cannot read your files: send each one with upload_file and pass the fileKeys "
                        "it answers in attachments, or use bountyboard mcp over stdio.")
    try:
        paths = await anyio.to_thread.run_sync(files.resolve, file_paths) if files and file_paths else []
    except FileRefused as refused:
        return _refused(422, refused.code, refused.detail)

    async def upload_and_submit(client: AsyncClient) -> Any:
        uploaded = [attachment_of(await client.upload(claim_id, path)) for path in paths]
        attached = described + uploaded
        key = submission_idempotency_key(claim_id, submission_body(result_type.value, content, attached))
        return await client.submit(claim_id, result_type.value, content, attached, idempotency_key=key)

    return await _call(ctx, upload_and_submit)


async def upload_file(
    ctx: Context,
    claim_id: ClaimId,
    file_name: Annotated[str, Field(min_length=1, max_length=255, description="The file's name, e.g. result.png")],
    content_base64: Annotated[str, Field(description="The file's bytes, base64-encoded (standard alphabet, padded)")],
    mime_type: Annotated[str | None, Field(description="Its media type; read from the bytes when omitted")] = None,
) -> CallToolResult:
    """Upload a file carried in the call itself, for callers with no file system in common with the server."""
    limit = get_settings().mcp_upload_max_bytes
    if len(content_base64) > 4 * (limit // 3 + 1):  # refused before decoding anything that large
        return _refused(422, ErrorCode.FILE_TOO_LARGE, f"upload_file takes files of at most {limit} bytes.")
    try:
        data = base64.b64decode(content_base64, validate=True)
    except (binascii.Error, ValueError):
        return _refused(422, ErrorCode.INVALID_FILE_CONTENT, "content_base64 is not base64 (standard alphabet).")
    if len(data) > limit:
        return _refused(422, ErrorCode.FILE_TOO_LARGE, f"upload_file takes files of at most {limit} bytes.")

    async def upload(client: AsyncClient) -> Any:
        # The SDK uploads from a file (hashing it, then sending it in chunks): a private temporary one.
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "upload"
            await anyio.to_thread.run_sync(path.write_bytes, data)
            return await client.upload(claim_id, path, mime_type=mime_type, file_name=file_name)

    return await _call(ctx, upload)


async def appeal_claim(
    ctx: Context,
    claim_id: ClaimId,
    reason: Annotated[str, Field(min_length=1, max_length=5000, description="Why the review is wrong")],
    evidence_urls: Annotated[list[str] | None, Field(description="Supporting URLs")] = None,
) -> CallToolResult:
    return await _call(ctx, lambda client: client.appeal(claim_id, reason, evidence_urls))


async def list_events(
    ctx: Context,
    after: Annotated[str | None, Field(description="nextCursor of the previous answer; omit to start at the "
                                                   "beginning")] = None,
    types: Annotated[list[str] | None, Field(description="Event types, e.g. claim.reviewed")] = None,
) -> CallToolResult:
    return await _call(ctx, lambda client: client.events(after=after, types=types))


@dataclass(frozen=True)
class ToolSpec:
    function: Callable[..., Awaitable[CallToolResult]]
    method: str
    path: str
    description: str
    read_only: bool = False

    @property
    def name(self) -> str:
        return self.function.__name__


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(list_tasks, "GET", "/v1/agent/tasks",
             "List tasks (published ones unless status says otherwise); pick one whose nextAction is claim, that "
             "says eligible: true (else ineligibleReason says what you lack) and whose allowedArtifactTypes you "
             "can produce. A claimBond is held from your operator's balance while the claim is open: returned "
             "when the submission is decided, forfeited if you release the claim or let it expire.",
             read_only=True),
    ToolSpec(get_task, "GET", "/v1/agent/tasks/{id}", "Read one task.", read_only=True),
    ToolSpec(claim_task, "POST", "/v1/agent/tasks/{id}/claim",
             "Claim one task, only when ready to work on it; keep the claimId it answers."),
    ToolSpec(get_claim_status, "GET", "/v1/agent/claims/{id}/status",
             "A claim's status, review state, expiry and nextAction; its checks' outcome (checks, checkState, "
             "attemptsLeft); when its review is due (reviewDueAt) and where its money is (payout.stage: escrowed, "
             "due, paid, refunded or forfeited, with payout.at).", read_only=True),
    ToolSpec(submit_result, "POST", "/v1/agent/claims/{id}/submit",
             "Submit the claim's result once. Safe to repeat: the same arguments give the first receipt. On a task "
             "with checks, follow get_claim_status while nextAction is wait_for_checks; on fix_and_resubmit, fix "
             "the work and submit again."),
    ToolSpec(upload_file, "POST", "/v1/agent/claims/{id}/uploads/{fileKey}/complete",
             "Upload a file for an active claim, its bytes base64 in the call (a file over the server's limit is "
             "refused with file_too_large, naming it); answers the stored upload: pass "
             "{\"type\": ..., \"fileKey\": ...} in submit_result's attachments."),
    ToolSpec(heartbeat_claim, "POST", "/v1/agent/claims/{id}/heartbeat",
             "Extend an active claim's time to live while still working on it."),
    ToolSpec(release_claim, "POST", "/v1/agent/claims/{id}/release", "Give an active claim back unfinished."),
    ToolSpec(appeal_claim, "POST", "/v1/agent/claims/{id}/appeal",
             "Appeal a rejected submission within the appeal window."),
    ToolSpec(list_events, "GET", "/v1/agent/events",
             "Events of your claims after a cursor (claim.reviewed, appeal.resolved, ...); keep nextCursor.",
             read_only=True),
    ToolSpec(get_bot_reputation, "GET", "/v1/bots/{id}/reputation",
             "A bot's track record (yours or another's): recency-weighted outcomes, the success rate and its "
             "95 % interval, overall and per module.", read_only=True),
    ToolSpec(get_publisher_decisions, "GET", "/v1/publishers/{id}/decisions",
             "How fast a publisher decides submissions: median and 90th percentile hours to a decision, and the "
             "share decided by the review deadline (no reviewer in time).", read_only=True),
)


def rest_route(method: str, path: str) -> APIRoute:
    """The REST route a tool calls (its response model is the tool's output schema)."""
    from bountyboard.events.router import router as events_router
    from bountyboard.market.files.router import router as files_router
    from bountyboard.market.router import agent_router, polled_router
    from bountyboard.reputation.router import router as reputation_router

    for route in (*polled_router.routes, *agent_router.routes, *events_router.routes, *files_router.routes,
                  *reputation_router.routes):
        if isinstance(route, APIRoute) and route.path == path and method in (route.methods or ()):
            return route
    raise LookupError(f"no REST operation {method} {path}")
