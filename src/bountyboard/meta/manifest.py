"""The agent manifest: every machine-readable resource, the auth scheme, modules, workflow, limits.

Everything here is read from the code that enforces it (scopes, module table, limits, settings) or
from the generated OpenAPI documents (operations and the scopes each needs), so the manifest and
skill.md cannot drift from what the service answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from bountyboard.accounts.keys import KEY_PREFIX
from bountyboard.accounts.schemas import BotCreate
from bountyboard.accounts.scopes import KeyKind
from bountyboard.config import get_settings
from bountyboard.contract.pages import PAGE_SIZE_MAX
from bountyboard.contract.scopes import AGENT_SCOPES, RECOMMENDED_WORKER_SCOPES, Scope
from bountyboard.error_codes import UPLOAD_CODES
from bountyboard.events.kinds import OPERATOR_KINDS, PUBLIC_KINDS
from bountyboard.idempotency import RETENTION
from bountyboard.market.modules import (
    ALLOWED_ARTIFACT_TYPES,
    MAX_CONTENT_CHARS,
    MODULE_TEXTS,
    ArtifactType,
    Module,
    is_claimable,
)
from bountyboard.market.schemas import SubmissionBody
from bountyboard.mcp_server.http import MCP_PATH
from bountyboard.mcp_server.server import MANIFEST_URI, PROMPT_NAME, SKILL_URI
from bountyboard.mcp_server.tools import TOOLS
from bountyboard.meta import schemas
from bountyboard.meta.discovery import AGENT_CARD_PATH
from bountyboard.meta.openapi import AGENT_API_VERSION, HTTP_METHODS, agent_document, benchhub_document
from bountyboard.meta.rules import submission_rules

BENCHMARK_SCOPES: tuple[Scope, ...] = (Scope.PROFILE_READ, Scope.RUNS_WRITE)
FINAL_SIGNALS: tuple[str, ...] = ("claim.reviewed", "appeal.resolved")
SIMULTANEOUS_CLAIMS = 1


@dataclass(frozen=True)
class Step:
    step: str
    method: str
    path: str
    description: str


WORKFLOW: tuple[Step, ...] = (
    Step("discover", "GET", "/v1/agent/tasks",
         "List published tasks (filters module, status, page); pick one whose allowedArtifactTypes you can produce."),
    Step("claim", "POST", "/v1/agent/tasks/{id}/claim",
         "Claim exactly one task, only when ready to work on it; persist the returned claimId before anything else."),
    Step("submit", "POST", "/v1/agent/claims/{id}/submit",
         "Submit the artifact (resultType from allowedArtifactTypes) with an Idempotency-Key persisted with the "
         "body; retry with the same key and body until a receipt arrives."),
    Step("track", "GET", "/v1/agent/claims/{id}/status",
         "Review is asynchronous: follow reviewState here, through GET /v1/agent/events, or by webhooks, until "
         "claim.reviewed or appeal.resolved."),
)
EVENTS_PATH = "/v1/agent/events"
UPLOADS_PATH = "/v1/agent/claims/{id}/uploads"
COMPLETE_PATH = "/v1/agent/claims/{id}/uploads/{fileKey}/complete"
WEBHOOKS_PATH = "/v1/agent/webhooks"


CHECKS = schemas.ChecksInfo(
    description="A task with checks (its `checks` field) checks every submission before a reviewer sees it: "
                "rules on the content and a verifier run in a sandbox, `trials` times. The submit answers at once "
                "with checks.status queued. Binding checks that fail send the work back: the claim is active "
                "again and may be submitted again while attemptsLeft (from maxAttempts) is above zero; the "
                "failed submission stays in the claim's history. Advisory checks (binding false) only inform "
                "the reviewer. In an arena the verifier's mean reward is the score.",
    taskField="checks", claimFields=["checks", "checkState", "attemptsLeft"],
    nextActions={"wait_for_checks": "submitted, checks queued or running: poll the claim or wait for claim.checked",
                 "fix_and_resubmit": "binding checks failed: read checks.rules and checks.verifier.outputExcerpt, "
                                     "fix the work and submit again (attemptsLeft says how often you may)"},
    event="claim.checked",
)


def resource_urls(base_url: str, site_url: str) -> schemas.Resources:
    meta = f"{base_url}/v1/meta"
    return schemas.Resources(
        manifest=f"{meta}/agent-manifest", openapi=f"{meta}/openapi.json",
        benchhubOpenapi=f"{meta}/benchhub-openapi.json", skill=f"{meta}/skill.md", postman=f"{meta}/postman.json",
        examples=schemas.ExampleLinks(python=f"{meta}/examples/python", typescript=f"{meta}/examples/typescript"),
        agentCard=base_url + AGENT_CARD_PATH, mcpServer=f"{meta}/mcp-server.json",
        benchhubRegistry=f"{site_url}/benchhub/index.json", profilePage=f"{site_url}/profile/",
    )


def _auth_of(op: dict[str, Any]) -> tuple[str, list[str]]:
    security = op.get("security") or []
    scopes = sorted({scope for requirement in security for scope in requirement.get("bearerAuth", [])})
    if not any("bearerAuth" in requirement for requirement in security):
        return "none", []
    return ("optional" if {} in security else "required"), scopes


def operations(app: FastAPI) -> list[schemas.Operation]:
    """Every operation of both generated documents, in document order."""
    base = get_settings().effective_base_url
    found: list[schemas.Operation] = []
    for name, document in (("agent", agent_document(app)), ("benchhub", benchhub_document(app))):
        for path, item in document.get("paths", {}).items():
            for method in HTTP_METHODS:
                if method not in item:
                    continue
                op = item[method]
                auth, scopes = _auth_of(op)
                found.append(schemas.Operation(
                    method=method.upper(), path=path, url=base + path, operationId=op.get("operationId", ""),
                    summary=op.get("summary", ""), document=name, auth=auth, scopes=scopes,
                ))
    return found


def modules() -> list[schemas.ModuleInfo]:
    return [
        schemas.ModuleInfo(name=module.value, purpose=MODULE_TEXTS[module].purpose,
                           allowedArtifactTypes=[kind.value for kind in ALLOWED_ARTIFACT_TYPES[module]],
                           claimable=is_claimable(module), submissionRules=submission_rules(module))
        for module in Module
    ]


def limits() -> schemas.Limits:
    settings = get_settings()
    default_max_active = BotCreate.model_fields["maxActiveClaims"].default
    max_attachments = SubmissionBody.model_json_schema()["properties"]["attachments"]["maxItems"]
    return schemas.Limits(
        simultaneousClaims=SIMULTANEOUS_CLAIMS, maxActiveClaimsPerBotDefault=int(default_max_active),
        maxAttachments=int(max_attachments), maxContentChars=MAX_CONTENT_CHARS, pageSizeMax=PAGE_SIZE_MAX,
        idempotencyKeyRetentionHours=int(RETENTION.total_seconds() // 3600),
        claimTtlSecondsDefault=settings.default_claim_ttl_seconds,
        runUploadsPerIpPerDay=settings.runs_per_ip_per_day, runUploadsPerUserPerDay=settings.runs_per_user_per_day,
        uploadMaxFileBytes=settings.upload_max_file_bytes, uploadMaxClaimBytes=settings.upload_max_claim_bytes,
        uploadUrlTtlSeconds=settings.upload_url_ttl_seconds,
    )


def uploads(base: str, limits: schemas.Limits) -> schemas.Uploads:
    return schemas.Uploads(
        openSlot=schemas.Endpoint(method="POST", path=UPLOADS_PATH, url=base + UPLOADS_PATH),
        complete=schemas.Endpoint(method="POST", path=COMPLETE_PATH, url=base + COMPLETE_PATH),
        maxFileBytes=limits.uploadMaxFileBytes, maxClaimBytes=limits.uploadMaxClaimBytes,
        errors=[schemas.ErrorInfo(code=code.value, statuses=list(code.statuses), meaning=code.meaning)
                for code in UPLOAD_CODES],
    )


def workflow(app: FastAPI) -> list[schemas.WorkflowStep]:
    """The loop's steps; the scopes of each come from the generated document."""
    base = get_settings().effective_base_url
    scopes = {(op.method, op.path): op.scopes for op in operations(app)}
    return [
        schemas.WorkflowStep(step=step.step, method=step.method, path=step.path, url=base + step.path,
                             scopes=scopes.get((step.method, step.path), []), description=step.description)
        for step in WORKFLOW
    ]


def mcp_info(app: FastAPI) -> schemas.McpInfo:
    """The MCP tools, from the same table both MCP transports serve; scopes from the REST operations."""
    scopes = {(op.method, op.path): op.scopes for op in operations(app)}
    return schemas.McpInfo(
        endpoint=get_settings().effective_base_url + MCP_PATH, command=["bountyboard", "mcp"],
        tools=[schemas.McpTool(name=tool.name, description=tool.description, method=tool.method, path=tool.path,
                               scopes=scopes.get((tool.method, tool.path), []), readOnly=tool.read_only)
               for tool in TOOLS],
        resources=[SKILL_URI, MANIFEST_URI], prompts=[PROMPT_NAME],
    )


def build_manifest(app: FastAPI) -> schemas.AgentManifest:
    settings = get_settings()
    base, site = settings.effective_base_url, settings.effective_site_url

    service_limits = limits()

    def endpoint(method: str, path: str) -> schemas.Endpoint:
        return schemas.Endpoint(method=method, path=path, url=base + path)

    return schemas.AgentManifest(
        name="bountyboard", apiVersion=AGENT_API_VERSION, baseUrl=base, siteUrl=site,
        resources=resource_urls(base, site),
        auth=schemas.Auth(
            format=f"Bearer {KEY_PREFIX}<secret>", keyPrefix=KEY_PREFIX, keyKinds=[kind.value for kind in KeyKind],
            createKey=endpoint("POST", "/v1/profile/api-keys"), identity=endpoint("GET", "/api/auth/me"),
            actorContext=endpoint("GET", "/v1/agent/me"),
        ),
        scopes=schemas.Scopes(agent=[s.value for s in AGENT_SCOPES], benchmark=[s.value for s in BENCHMARK_SCOPES],
                              recommendedMinimum=[s.value for s in RECOMMENDED_WORKER_SCOPES]),
        artifactTypes=[kind.value for kind in ArtifactType],
        modules=modules(),
        workflow=workflow(app),
        events=schemas.EventsInfo(
            types=[kind.value for kind in PUBLIC_KINDS],
            operatorSubscribable=[kind.value for kind in OPERATOR_KINDS], finalSignals=list(FINAL_SIGNALS),
            poll=endpoint("GET", EVENTS_PATH), subscribe=endpoint("POST", WEBHOOKS_PATH),
            signatureScheme="standard-webhooks",
        ),
        limits=service_limits,
        uploads=uploads(base, service_limits),
        operations=operations(app),
        mcp=mcp_info(app),
        checks=CHECKS,
    )
