"""HTTP routes of the benchmark hub. Reads are public; uploads are anonymous or keyed (runs:write)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import ratelimit
from bountyboard.accounts.auth import Actor, require_optional
from bountyboard.accounts.dependencies import AdminActor
from bountyboard.benchhub import exports, pools, registry, results, service
from bountyboard.benchhub.answers import (
    Comparison,
    Leaderboard,
    ReproducedAnswer,
)
from bountyboard.benchhub.schemas import (
    BenchmarkRecord,
    RegistryIndex,
    RetractBody,
    RunDetail,
    RunOut,
    RunUpload,
    RunUploadResult,
)
from bountyboard.clock import rfc3339
from bountyboard.conditional import still_fresh
from bountyboard.config import get_settings
from bountyboard.contract.scopes import Scope
from bountyboard.errors import problem_responses
from bountyboard.pagination import Page, Paging
from bountyboard.storage.session import ReadSession, WriteSession

DAY_SECONDS = 24 * 3600
INDEX_CACHE_CONTROL = "public, max-age=300, must-revalidate"
# Hub reads change with every upload: clients keep them and revalidate each time (a 304 is cheap).
READ_CACHE_CONTROL = "no-cache"
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {304: {"description": "Not modified (If-None-Match matched the ETag)"}}
IncludeAnonymous = Annotated[bool, Query(description="false leaves out runs uploaded without an account")]

router = APIRouter(tags=["benchhub"], responses=problem_responses(422))


def _json(content: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    # Records are served exactly as stored: explicit nulls stay, absent optional fields stay absent.
    return JSONResponse(content, headers=headers)


@router.get("/benchhub/index.json", summary="The static benchmark registry", response_model=RegistryIndex,
            responses={304: {"description": "Not modified (If-None-Match matched the ETag)"}})
async def registry_index(request: Request, session: ReadSession) -> Response:
    records, latest = await service.all_records(session)
    digest = registry.record_sha256({"records": records})
    etag = f'"{digest}"'
    headers = {"ETag": etag, "Cache-Control": INDEX_CACHE_CONTROL}
    if still_fresh(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    body = {"schemaVersion": registry.SCHEMA_VERSION, "generatedAt": rfc3339(latest), "sha256": digest,
            "records": records}
    return _json(body, headers)


@router.get("/v1/bench/benchmarks", summary="Search benchmarks", response_model=Page[BenchmarkRecord])
async def search_benchmarks(
    session: ReadSession, paging: Paging,
    q: Annotated[str | None, Query(max_length=200, description="Words that must all appear")] = None,
    kind: Annotated[str | None, Query(pattern="^(hf_rows|harbor_native|external_harness)$")] = None,
    tag: Annotated[str | None, Query(max_length=100)] = None,
) -> Response:
    records, total = await service.search_benchmarks(session, q, kind, tag, paging)
    page = Page[Any].of(records, paging, total)
    return _json(page.model_dump())


@router.get("/v1/bench/benchmarks/{slug}", summary="A benchmark record", response_model=BenchmarkRecord,
            responses=problem_responses(404))
async def get_benchmark(slug: str, session: ReadSession) -> Response:
    return _json((await service.get_benchmark(session, slug)).record)


async def _conditional(request: Request, session: AsyncSession, conditions: Sequence[ColumnElement[bool]],
                       build: Callable[[], Awaitable[BaseModel]]) -> Response:
    """Answer 304 when the client's ETag still matches the pools and registry the answer is made of."""
    query = "&".join(sorted(f"{name}={value}" for name, value in request.query_params.multi_items()))
    etag = await pools.fingerprint(session, conditions, request.url.path, query)
    headers = {"ETag": etag, "Cache-Control": READ_CACHE_CONTROL}
    if still_fresh(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return _json((await build()).model_dump(mode="json"), headers)


@router.get("/v1/bench/benchmarks/{slug}/leaderboard", summary="(Model, agent) results on one benchmark",
            response_model=Leaderboard, responses={**problem_responses(404), **NOT_MODIFIED})
async def benchmark_leaderboard(slug: str, request: Request, session: ReadSession,
                                includeAnonymous: IncludeAnonymous = True) -> Response:
    return await _conditional(request, session, results.leaderboard_conditions(slug),
                              lambda: results.leaderboard(session, slug, include_anonymous=includeAnonymous))


ModelName = Annotated[str, Query(min_length=1, max_length=300, description="A model, matched through the alias table",
                                 examples=["acme/calc-1"])]
AgentName = Annotated[str | None, Query(min_length=1, max_length=300,
                                        description="Its agent; default: its agent with the most tasks")]


@router.get("/v1/bench/benchmarks/{slug}/compare", summary="Two models' paired difference on the tasks both ran",
            response_model=Comparison, responses={**problem_responses(404), **NOT_MODIFIED})
async def compare_models(slug: str, request: Request, session: ReadSession, a: ModelName, b: ModelName,
                         agentA: AgentName = None, agentB: AgentName = None,
                         includeAnonymous: IncludeAnonymous = True) -> Response:
    """``a`` minus ``b`` on their shared tasks: means, difference, task-clustered standard error, 95% interval
    and p-value (exact McNemar for single-attempt pass/fail, paired t otherwise; docs/benchhub.md)."""
    return await _conditional(request, session, results.compare_conditions(slug, a, b),
                              lambda: results.compare(session, slug, a, b, agent_a=agentA, agent_b=agentB,
                                                      include_anonymous=includeAnonymous))


@router.put("/v1/admin/bench/benchmarks/{slug}", summary="Add or replace a benchmark record (admin)",
            response_model=BenchmarkRecord, responses=problem_responses(401, 403))
async def upsert_benchmark(slug: str, body: BenchmarkRecord, actor: AdminActor, session: WriteSession) -> Response:
    record, _ = await service.upsert_benchmark(session, slug, body.model_dump(mode="json", exclude_unset=True))
    return _json(record)


async def upload_quota(
    request: Request, response: Response,
    actor: Annotated[Actor | None, require_optional(Scope.RUNS_WRITE)],
) -> service.Uploader:
    """Count the upload against its caller's daily limit: per user with a key, per address without."""
    settings = get_settings()
    ip = request.client.host if request.client else "unknown"
    if actor is None:
        policy = ratelimit.RatePolicy("runs-ip", settings.runs_per_ip_per_day, DAY_SECONDS)
        identity = ip
    else:
        policy = ratelimit.RatePolicy("runs-user", settings.runs_per_user_per_day, DAY_SECONDS, fail_open=True)
        identity = actor.user_id
    response.headers.update(await ratelimit.enforce(policy, identity))
    if actor is None:
        return service.Uploader(user_id=None, bot_id=None, ip=ip)
    return service.Uploader(user_id=actor.user_id, bot_id=actor.bot_id, ip=ip, display_name=actor.user.display_name)


@router.post(
    "/v1/runs", summary="Upload a benchmark run (verifier scores)", response_model=RunUploadResult,
    responses=problem_responses(401, 403, 429, 503),
    # Anonymous uploads are allowed: the empty requirement sits beside bearerAuth with runs:write.
    openapi_extra={"security": [{}]},
)
async def upload_run(body: RunUpload, uploader: Annotated[service.Uploader, Depends(upload_quota)],
                     session: WriteSession) -> RunUploadResult:
    run, duplicate = await service.upload_run(session, body, uploader)
    return RunUploadResult(run=run, duplicate=duplicate)


@router.get("/v1/bench/runs", summary="List uploaded runs", response_model=Page[RunOut])
async def list_runs(
    session: ReadSession, paging: Paging,
    benchmark: Annotated[str | None, Query(max_length=100)] = None,
    model: Annotated[str | None, Query(max_length=300, description="Matched through the model alias table")] = None,
    submitter: Annotated[str | None, Query(max_length=64, description="usr_... or anon_...")] = None,
    retracted: bool | None = None,
) -> Page[RunOut]:
    runs, total = await service.list_runs(session, paging, benchmark=benchmark, model=model, submitter=submitter,
                                          retracted=retracted)
    return Page[RunOut].of(runs, paging, total)


@router.get("/v1/bench/runs/{id}", summary="A run with its trials", response_model=RunDetail,
            responses={**problem_responses(404), 200: {
                "description": "The run; with `format=every-eval-ever`, `{aggregate, instances, aggregatePath, "
                               "instancesPath}` in Every Eval Ever's schema 0.3.0; with `format=hf-eval-results`, "
                               "the `.eval_results/<benchmark>.yaml` file of a Hugging Face model repo",
                "content": {"application/yaml": {"schema": {"type": "string"}}}}})
async def get_run(id: str, session: ReadSession, format: Annotated[
        Literal["hub", "every-eval-ever", "hf-eval-results"], Query(
            description="`every-eval-ever`: the run as an Every Eval Ever aggregate record and its instances; "
                        "`hf-eval-results`: as a Hugging Face `.eval_results` YAML entry (422 `no_hf_dataset` "
                        "when its benchmark is not a Hugging Face dataset)")] = "hub",
        ) -> RunDetail | Response:
    if format == "hub":
        return await service.get_run(session, id)
    run, record = await service.run_and_record(session, id)
    settings = get_settings()
    if format == "hf-eval-results":
        page = f"{settings.effective_site_url}/benchhub/runs/{id}"
        return Response(exports.hf_eval_results(run, record, page), media_type="application/yaml")
    return JSONResponse(exports.every_eval_ever(run, record, f"{settings.effective_base_url}/v1/bench/runs/{id}"))


@router.post("/v1/admin/bench/runs/{id}/retract", summary="Retract a run, with a visible reason (admin)",
             response_model=RunOut, responses=problem_responses(401, 403, 404, 409))
async def retract_run(id: str, body: RetractBody, actor: AdminActor, session: WriteSession) -> RunOut:
    return await service.retract_run(session, id, body.reason, actor.user_id)


@router.get("/v1/bench/reproduced", summary="Reproduced results and gaps for a model",
            response_model=ReproducedAnswer, responses=NOT_MODIFIED)
async def reproduced(
    request: Request, session: ReadSession,
    model: Annotated[str, Query(min_length=1, max_length=300, description="e.g. anthropic/claude-sonnet-4-5")],
    includeAnonymous: IncludeAnonymous = True,
) -> Response:
    return await _conditional(request, session, results.reproduced_conditions(model),
                              lambda: results.reproduced(session, model, include_anonymous=includeAnonymous))
