"""HTTP routes of the marketplace: agents (SPEC.md section 4), publishers and reviewers (DESIGN.md section 6)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from bountyboard.accounts.auth import Actor, KeyOnlyRoute, require
from bountyboard.accounts.dependencies import Publisher, Reviewer
from bountyboard.clock import now, rfc3339
from bountyboard.conditional import conditional_json, json_with_etag, not_modified, still_fresh
from bountyboard.contract.scopes import Scope
from bountyboard.errors import problem_responses
from bountyboard.ledger.service import to_cents
from bountyboard.market import (
    checking,
    claim_flows,
    decisions,
    eligibility,
    listing,
    review,
    service,
    submissions,
    task_flows,
    views,
)
from bountyboard.market.decisions import PublisherDecisions
from bountyboard.market.models import TaskStatus
from bountyboard.market.modules import Module
from bountyboard.market.schemas import (
    AgentClaimStatus,
    AgentTask,
    AppealCreate,
    AppealOut,
    AppealResolve,
    ClaimCreated,
    ClaimDetail,
    ClaimListQuery,
    FundRequest,
    JudgeTarget,
    Leaderboard,
    ReviewDecision,
    SubmissionBody,
    SubmissionReceipt,
    TaskCreate,
    TaskListQuery,
    TaskUpdate,
    VerifierArchiveOut,
)
from bountyboard.pagination import KeysetPage, Page, Paging
from bountyboard.storage.session import ReadSession, StagedSession, WriteSession, request_session_source, state_stamp
from bountyboard.storage.unit_of_work import transaction

ModuleFilter = Annotated[Module | None, Query(description="Only tasks of this module")]


# The agent's guarantees; publishers' and reviewers' are in accounts.dependencies.
Claimer = Annotated[Actor, require(Scope.TASKS_CLAIM)]
Submitter = Annotated[Actor, require(Scope.CLAIMS_SUBMIT)]

agent_router = APIRouter(prefix="/v1", tags=["agent"], responses=problem_responses(401, 403, 404, 422))
# The task list alone, which the app puts in its own route table (app.create_app): agents poll it most.
polled_router = APIRouter(prefix="/v1", tags=["agent"], responses=problem_responses(401, 403, 404, 422))
publisher_router = APIRouter(prefix="/v1/tasks", tags=["publisher"], responses=problem_responses(401, 403, 404, 422))
review_router = APIRouter(prefix="/v1", tags=["review"], responses=problem_responses(401, 403, 404, 422))


# Agents -------------------------------------------------------------------------------------------

_CONDITIONAL: dict[int | str, dict[str, Any]] = {
    304: {"description": "Not modified: the If-None-Match ETag still names the answer."}}


async def list_tasks(request: Request, actor: Annotated[Actor, require(Scope.TASKS_READ)]) -> Response:
    # The most polled route reads its query and takes its session itself, and its caller is checked without
    # FastAPI's dependency solving (KeyOnlyRoute): what FastAPI resolves costs every poll (docs/performance.md).
    # A poll answered from what the process keeps makes no session (request_session_source).
    asked, session, stamp = TaskListQuery.of(request), request_session_source(request), await state_stamp(request)
    caller = await eligibility.caller_of(session, actor, stamp, now())
    query = listing.TaskQuery.of(asked.module, TaskStatus(asked.status) if asked.status else None, asked, asked.after,
                                 caller, bool(asked.eligible))
    content, etag = await listing.task_list(session, stamp, query, request.headers.get("if-none-match"))
    return not_modified(etag) if content is None else json_with_etag(content, etag)


polled_router.add_api_route(
    "/agent/tasks", list_tasks, methods=["GET"], route_class_override=KeyOnlyRoute, summary="List agent-friendly tasks",
    response_model=KeysetPage[AgentTask], responses=_CONDITIONAL, openapi_extra=TaskListQuery.openapi(),
    description="Newest first, by `page` or by cursor (`after` = the previous page's `nextCursor`). Send the answer's "
                "`ETag` back as `If-None-Match` to get 304 while nothing in it changed.")


@agent_router.get("/agent/tasks/{id}", summary="One task", response_model=AgentTask, responses=_CONDITIONAL)
async def get_task(id: str, request: Request, session: ReadSession,
                   actor: Annotated[Actor, require(Scope.TASKS_READ)]) -> Response:
    task = await service.get_task_for(session, actor.user, id)
    caller = await eligibility.caller_of(lambda: session, actor, await state_stamp(request, session), now())
    etag = listing.task_etag(task, caller)
    if still_fresh(request.headers.get("if-none-match"), etag):
        return not_modified(etag)
    return json_with_etag(listing.task_for(task, caller).model_dump_json().encode(), etag)


@agent_router.post("/agent/tasks/{id}/claim", summary="Claim a task", response_model=ClaimCreated,
                   responses=problem_responses(409))
async def claim_task(id: str, actor: Claimer, session: WriteSession) -> ClaimCreated:
    return views.claim_created(await claim_flows.claim_task(session, actor, id))


@agent_router.get("/agent/claims", summary="The caller's claims", response_model=KeysetPage[AgentClaimStatus],
                  openapi_extra=ClaimListQuery.openapi(),
                  description="Newest first, by `page` or by cursor (`after` = the previous page's `nextCursor`).")
async def list_claims(request: Request, session: ReadSession, actor: Annotated[Actor, require(Scope.CLAIMS_READ)]
                      ) -> KeysetPage[AgentClaimStatus]:
    asked = ClaimListQuery.of(request)
    return await listing.list_holder_claims(session, actor, asked.status, asked, asked.after)


@agent_router.get("/agent/claims/{id}/status", summary="Claim state, review state and next action",
                  response_model=AgentClaimStatus, responses=_CONDITIONAL)
async def claim_status(id: str, request: Request, session: ReadSession,
                       actor: Annotated[Actor, require(Scope.CLAIMS_READ)]) -> Response:
    return conditional_json(request, await service.get_claim_for(session, actor, id))


def _claim_action(action: str, summary: str, answer: type[Any]) -> Any:
    """The route of ``POST /v1/agent/claims/{id}/<action>``: a move of the caller's claim (409 when refused)."""
    return agent_router.post(f"/agent/claims/{{id}}/{action}", summary=summary, response_model=answer,
                             responses=problem_responses(409))


@_claim_action("submit", "Record the final artifact (once)", SubmissionReceipt)
async def submit(id: str, body: SubmissionBody, actor: Submitter, session: WriteSession) -> SubmissionReceipt:
    return await views.receipt(session, *await submissions.submit(session, actor, id, body))


@_claim_action("heartbeat", "Extend an active claim's TTL", AgentClaimStatus)
async def heartbeat(id: str, actor: Claimer, session: WriteSession) -> AgentClaimStatus:
    return (await views.claim_statuses(session, [await claim_flows.heartbeat(session, actor, id)]))[0]


@_claim_action("release", "Give an active claim back", AgentClaimStatus)
async def release(id: str, actor: Claimer, session: WriteSession) -> AgentClaimStatus:
    return (await views.claim_statuses(session, [await claim_flows.release_claim(session, actor, id)]))[0]


@_claim_action("appeal", "Appeal a rejection within the appeal window", AppealOut)
async def appeal(id: str, body: AppealCreate, actor: Submitter, session: WriteSession) -> AppealOut:
    return views.appeal_out(await review.open_appeal(session, actor, id, body))


@agent_router.get("/judge/tasks/{id}/target", summary="The submission a judge task evaluates",
                  response_model=JudgeTarget)
async def judge_target(id: str, session: ReadSession,
                       actor: Annotated[Actor, require(Scope.JUDGE_READ)]) -> JudgeTarget:
    return await service.judge_target(session, actor, id)


@agent_router.get("/leaderboard", summary="Arena rankings and per-bot reputation", response_model=Leaderboard)
async def leaderboard(session: ReadSession, actor: Annotated[Actor, require(Scope.LEADERBOARD_READ)],
                      limit: Annotated[int, Query(ge=1, le=100)] = 20) -> Leaderboard:
    return await service.leaderboard(session, limit)


@agent_router.get("/publishers/{id}/decisions", summary="How fast a publisher's submissions are decided",
                  response_model=PublisherDecisions,
                  description="Median and 90th percentile hours from submission to the first decision (nearest "
                              "rank), and the share decided by the review deadline. Any valid key may read it, so "
                              "bots can choose whom to work for.")
async def publisher_decisions(id: str, session: ReadSession, actor: Annotated[Actor, require()]) -> PublisherDecisions:
    return await decisions.publisher_decisions(session, id)


# Publishers ---------------------------------------------------------------------------------------

@publisher_router.post("", summary="Create a task (as a draft)", response_model=AgentTask)
async def create_task(body: TaskCreate, publisher: Publisher, session: WriteSession) -> AgentTask:
    return views.task_out(await service.create_task(session, publisher, body))


@publisher_router.get("", summary="The publisher's tasks", response_model=Page[AgentTask])
async def list_own_tasks(session: ReadSession, publisher: Publisher, paging: Paging, module: ModuleFilter = None,
                         status: TaskStatus | None = None) -> Page[AgentTask]:
    return await service.list_publisher_tasks(session, publisher, module, status, paging)


@publisher_router.get("/{id}", summary="One of the publisher's tasks", response_model=AgentTask)
async def get_own_task(id: str, session: ReadSession, publisher: Publisher) -> AgentTask:
    return views.task_out(await service.get_own_task(session, publisher, id))


@publisher_router.patch("/{id}", summary="Edit a draft", response_model=AgentTask, responses=problem_responses(409))
async def update_task(id: str, body: TaskUpdate, publisher: Publisher, session: WriteSession) -> AgentTask:
    return views.task_out(await service.update_task(session, publisher, id, body))


@publisher_router.put("/{id}/verifier-archive", summary="Upload a draft's verifier as a .tar.gz of its tests/",
                      response_model=VerifierArchiveOut, responses=problem_responses(409, 413),
                      openapi_extra={"requestBody": {"required": True, "content": {
                          "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
async def put_verifier_archive(id: str, request: Request, publisher: Publisher,
                               session: WriteSession) -> VerifierArchiveOut:
    stored = await checking.store_verifier_archive(session, publisher, id, await request.body())
    return VerifierArchiveOut(archiveKey=stored.id, taskId=stored.task_id, sha256=stored.sha256,
                              sizeBytes=stored.size_bytes, createdAt=rfc3339(stored.created_at) or "")


@publisher_router.post("/{id}/publish", summary="Publish a draft, escrowing its bounty", response_model=AgentTask,
                       responses=problem_responses(402, 409))
async def publish_task(id: str, publisher: Publisher, session: StagedSession) -> AgentTask:
    # Three steps: read the draft's checks, self-test its verifier outside any transaction (it runs for
    # seconds), publish in a unit of work that refuses checks changed meanwhile.
    async with transaction(session):
        checks = (await service.get_own_task(session, publisher, id)).checks
        archive = await checking.archive_of(session, checks)
    await checking.require_self_test(checks, archive)
    async with transaction(session):
        return views.task_out(await task_flows.publish_task(session, publisher, id, checks))


@publisher_router.post("/{id}/cancel", summary="Cancel a task, refunding its escrow", response_model=AgentTask,
                       responses=problem_responses(409))
async def cancel_task(id: str, publisher: Publisher, session: WriteSession) -> AgentTask:
    return views.task_out(await task_flows.cancel_task(session, publisher, id))


@publisher_router.post("/{id}/close", summary="Close an arena: rank and pay by payoutSplit", response_model=AgentTask,
                       responses=problem_responses(409))
async def close_task(id: str, publisher: Publisher, session: WriteSession) -> AgentTask:
    return views.task_out(await task_flows.close_task(session, publisher, id))


@publisher_router.post("/{id}/fund", summary="Add funds to a donate task's bounty", response_model=AgentTask,
                       responses=problem_responses(402, 409))
async def fund_task(id: str, body: FundRequest, publisher: Publisher, session: WriteSession) -> AgentTask:
    return views.task_out(await task_flows.fund_task(session, publisher, id, to_cents(body.amount)))


@publisher_router.get("/{id}/claims", summary="The claims of a task, with their submissions",
                      response_model=Page[ClaimDetail])
async def task_claims(id: str, session: ReadSession, publisher: Publisher, paging: Paging) -> Page[ClaimDetail]:
    return await service.list_task_claims(session, publisher, id, paging)


# Reviewers ----------------------------------------------------------------------------------------

Escalated = Annotated[bool | None, Query(description="Admins: only those escalated at their deadline (true) or "
                                                      "only the others (false); others never see escalated ones")]

@review_router.get("/review/queue", summary="Submissions awaiting review, oldest first",
                   response_model=Page[ClaimDetail])
async def review_queue(session: ReadSession, reviewer: Reviewer, paging: Paging, module: ModuleFilter = None,
                       escalated: Escalated = None,
                       checks: Annotated[checking.CheckFilter | None, Query(
                           description="Only submissions whose checks ended so (pending: queued or running; "
                                       "none: a task without checks)")] = None,
                       order: Annotated[checking.CheckOrder, Query(
                           description="submitted: oldest first; checks: passed first, failed last")] = "submitted",
                       ) -> Page[ClaimDetail]:
    return await service.review_queue(session, reviewer, module, paging, escalated, checks=checks, order=order)


@review_router.post("/review/claims/{id}", summary="Accept or reject a submission", response_model=ClaimDetail,
                    responses=problem_responses(409))
async def review_claim(id: str, body: ReviewDecision, reviewer: Reviewer, session: WriteSession) -> ClaimDetail:
    claim = await review.review_claim(session, reviewer, id, body)
    return (await views.claim_details(session, [claim]))[0]


@review_router.get("/appeals", summary="Appeals", response_model=Page[AppealOut])
async def list_appeals(session: ReadSession, reviewer: Reviewer, paging: Paging,
                       status: Literal["open", "resolved"] | None = "open",
                       escalated: Escalated = None) -> Page[AppealOut]:
    return await service.list_appeals(session, reviewer, status, paging, escalated)


@review_router.post("/appeals/{id}/resolve", summary="Resolve an appeal", response_model=AppealOut,
                    responses=problem_responses(409))
async def resolve_appeal(id: str, body: AppealResolve, reviewer: Reviewer, session: WriteSession) -> AppealOut:
    return views.appeal_out(await review.resolve_appeal(session, reviewer, id, body))
