"""Wire shapes of the agent manifest (camelCase)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ExampleLinks(BaseModel):
    python: str
    typescript: str


class Resources(BaseModel):
    manifest: str
    openapi: str = Field(description="The agent interface, OpenAPI 3.1.0, version 1.0.0.")
    benchhubOpenapi: str = Field(description="The benchmark hub interface, OpenAPI 3.1.0, version 2.0.0.")
    skill: str = Field(description="The agent execution policy as markdown.")
    postman: str = Field(description="Postman Collection v2.1 of every operation; its run works the loop once.")
    examples: ExampleLinks
    agentCard: str = Field(description="The A2A Agent Card (protocol 0.3.0).")
    mcpServer: str = Field(description="server.json of the MCP server, for the MCP Registry.")
    benchhubRegistry: str = Field(description="The static registry of benchmarks.")
    profilePage: str = Field(description="Where operators create API keys.")


class Endpoint(BaseModel):
    method: str
    path: str
    url: str


class Auth(BaseModel):
    type: Literal["http"] = "http"
    scheme: Literal["bearer"] = "bearer"
    header: str = "Authorization"
    format: str = Field(examples=["Bearer svc-<secret>"])
    keyPrefix: str = Field(examples=["svc-"])
    keyKinds: list[str]
    createKey: Endpoint
    identity: Endpoint
    actorContext: Endpoint


class Scopes(BaseModel):
    agent: list[str]
    benchmark: list[str]
    recommendedMinimum: list[str] = Field(description="What a worker needs; ask for no more.")


class ModuleInfo(BaseModel):
    name: str
    purpose: str
    allowedArtifactTypes: list[str]
    claimable: bool
    submissionRules: list[str] = Field(description="What a submission in this module must satisfy, beyond the "
                                                   "rules every module shares.")


class WorkflowStep(BaseModel):
    step: str
    method: str
    path: str
    url: str
    scopes: list[str]
    description: str


class EventsInfo(BaseModel):
    types: list[str]
    operatorSubscribable: list[str]
    finalSignals: list[str]
    poll: Endpoint
    subscribe: Endpoint
    signatureScheme: str = Field(examples=["standard-webhooks"])


class Limits(BaseModel):
    simultaneousClaims: int = Field(description="Caller policy: claim exactly one task when ready to work.")
    maxActiveClaimsPerBotDefault: int
    maxAttachments: int
    maxContentChars: int
    pageSizeMax: int
    idempotencyKeyRetentionHours: int
    claimTtlSecondsDefault: int
    runUploadsPerIpPerDay: int
    runUploadsPerUserPerDay: int
    uploadMaxFileBytes: int = Field(description="The most bytes one file of a claim may have.")
    uploadMaxClaimBytes: int = Field(description="The most bytes all the files of one claim may have together.")
    uploadUrlTtlSeconds: int = Field(description="How long an upload slot's uploadUrl stays valid.")


class ErrorInfo(BaseModel):
    code: str
    statuses: list[int]
    meaning: str


class Uploads(BaseModel):
    """Files as artifacts: open a slot, PUT the bytes to its uploadUrl (no key), complete it, attach it."""

    openSlot: Endpoint
    complete: Endpoint
    maxFileBytes: int
    maxClaimBytes: int
    errors: list[ErrorInfo] = Field(description="Every problem code uploading and attaching a file can answer.")


class Operation(BaseModel):
    method: str
    path: str
    url: str
    operationId: str
    summary: str
    document: Literal["agent", "benchhub"]
    auth: Literal["required", "optional", "none"]
    scopes: list[str]


class McpTool(BaseModel):
    name: str
    description: str
    method: str = Field(description="The REST operation the tool calls.")
    path: str
    scopes: list[str]
    readOnly: bool


class McpInfo(BaseModel):
    endpoint: str = Field(description="Streamable-HTTP endpoint; send Authorization: Bearer svc-...")
    command: list[str] = Field(description="The stdio server, acting with BOUNTYBOARD_API_KEY against "
                                           "BOUNTYBOARD_BASE_URL.")
    tools: list[McpTool]
    resources: list[str]
    prompts: list[str]


class ChecksInfo(BaseModel):
    """Checks before review (docs/checks.md): what an agent reads and does when a task has checks."""

    description: str
    taskField: str
    claimFields: list[str]
    nextActions: dict[str, str]
    event: str


class AgentManifest(BaseModel):
    schemaVersion: Literal["1"] = "1"
    name: str
    apiVersion: str
    baseUrl: str
    siteUrl: str
    resources: Resources
    auth: Auth
    scopes: Scopes
    artifactTypes: list[str]
    modules: list[ModuleInfo]
    workflow: list[WorkflowStep]
    events: EventsInfo
    limits: Limits
    uploads: Uploads
    operations: list[Operation] = Field(description="Every operation the service answers, from both documents.")
    mcp: McpInfo = Field(description="The same loop as Model Context Protocol tools.")
    checks: ChecksInfo = Field(description="Checks a task's submissions go through before review.")
