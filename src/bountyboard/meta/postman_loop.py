"""The marketplace loop the Postman collection runs (``bountyboard.meta.postman`` builds it).

:data:`LOOP` is the collection's run order: folders per role (discovery, publisher, bot, reviewer,
the bench hub) whose requests publish a task, claim it, follow it, upload a file and submit it with
the file attached, accept it, and upload a benchmark run. The file's bytes go to the ``uploadUrl``
the service answers and come back from its ``downloadUrl`` (:class:`Transfer`), whichever storage
signed them. Each request authenticates with the key variable of its role (``publisherKey``,
``botKey``, ``reviewerKey``), asserts the documented status (and what :class:`Call` ``expects``),
and stores the ids the next requests use in collection variables (``saves``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from bountyboard.contract.scopes import Scope


@dataclass(frozen=True)
class Role:
    folder: str
    key: str | None  # the collection variable holding the role's API key; None: no key
    description: str


DISCOVERY = Role("Discovery", None, "The machine-readable companions; no key needed.")
PUBLISHER = Role("Publisher", "publisherKey", "A publisher drafts, edits and publishes a task; as the operator of "
                 "its own account it also manages bots and keys.")
BOT = Role("Bot", "botKey", "A worker bot finds the task, claims it, follows it and submits the result.")
REVIEWER = Role("Reviewer", "reviewerKey", "A reviewer accepts the submission.")
SETTLED = Role("Publisher, after the review", "publisherKey", "The publisher sees its task's claim accepted.")
BENCH = Role("Bench hub", "botKey", "The benchmark hub: the registry, a run upload and the results it feeds.")
ROLES = (DISCOVERY, PUBLISHER, BOT, REVIEWER, SETTLED, BENCH)
KEY_ROLES = {"publisherKey": "A publisher's user key", "botKey": "A bot key of an operator's bot",
             "reviewerKey": "A reviewer's user key"}
# Outside the loop, a request uses the key of the role whose scope it needs.
KEY_OF_SCOPE = {Scope.TASKS_PUBLISH: "publisherKey", Scope.AGENT_MANAGE: "publisherKey",
                Scope.CLAIMS_REVIEW: "reviewerKey", Scope.ADMIN: "adminKey"}


@dataclass(frozen=True)
class Call:
    """One request of the loop: which operation, as whom, with what, and what it must answer."""

    role: Role
    method: str
    path: str
    status: int = 200
    body: dict[str, Any] | None = None  # None: the operation's documented example
    query: dict[str, str] = field(default_factory=dict)
    saves: dict[str, str] = field(default_factory=dict)  # collection variable -> expression on `body`
    expects: dict[str, str] = field(default_factory=dict)  # expression on `body` -> JSON value it must equal
    prerequest: tuple[str, ...] = ()


@dataclass(frozen=True)
class Transfer:
    """Bytes sent to, or read from, a URL the service handed out (uploadUrl, downloadUrl): the
    service's own signed URL or a storage's presigned one, so no operation of the documents."""

    role: Role
    name: str
    method: str
    url_variable: str
    body: str | None = None
    content_type_variable: str | None = None
    checks: tuple[str, ...] = ()


# A small text file the bot attaches to its submission.
FILE_TEXT = "An old silent pond\n"
FILE_SLOT = {"fileName": "haiku.txt", "mimeType": "text/plain", "sizeBytes": len(FILE_TEXT.encode()),
             "sha256": hashlib.sha256(FILE_TEXT.encode()).hexdigest()}

_RUN_BODY = {
    "benchmark": "gsm8k", "model": "postman-model", "agent": {"name": "postman-agent", "version": "1.0"},
    "harness": {"name": "postman", "version": "1.0"}, "dataset": {"ref": "openai/gsm8k", "revision": "main"},
    "trials": [{"taskId": "task-0", "trialName": "task-0__0", "rewards": {"reward": 1.0},
                "startedAt": "2026-01-01T10:00:00Z", "finishedAt": "2026-01-01T10:00:05Z"}],
    "bundleSha256": "{{bundleSha256}}",
}

LOOP: tuple[Call | Transfer, ...] = (
    Call(DISCOVERY, "GET", "/v1/meta/agent-manifest", expects={"body.name": '"bountyboard"'}),
    Call(DISCOVERY, "GET", "/v1/meta/skill.md"),
    Call(DISCOVERY, "GET", "/v1/meta/openapi.json", expects={"body.openapi": '"3.1.0"'}),
    Call(DISCOVERY, "GET", "/v1/meta/benchhub-openapi.json", expects={"body.openapi": '"3.1.0"'}),
    Call(DISCOVERY, "GET", "/v1/meta/postman.json"),
    Call(DISCOVERY, "GET", "/v1/meta/mcp-server.json", expects={"body.name": '"dev.bountyboard/bountyboard"'}),
    Call(DISCOVERY, "GET", "/v1/meta/examples/python"),
    Call(DISCOVERY, "GET", "/v1/meta/examples/typescript"),
    Call(PUBLISHER, "GET", "/api/auth/me"),
    Call(PUBLISHER, "GET", "/v1/profile"),
    Call(PUBLISHER, "GET", "/v1/profile/balance"),
    Call(PUBLISHER, "POST", "/v1/tasks", saves={"taskId": "body.id"}, expects={"body.status": '"draft"'},
         body={"module": "fun", "title": "A haiku about queues", "description": "Write a haiku.", "maxClaims": 1}),
    Call(PUBLISHER, "PATCH", "/v1/tasks/{id}", body={"description": "Write a haiku about waiting in line."}),
    Call(PUBLISHER, "GET", "/v1/tasks/{id}", expects={"body.id": "pm.collectionVariables.get('taskId')"}),
    Call(PUBLISHER, "GET", "/v1/tasks", query={"status": "draft"}),
    Call(PUBLISHER, "POST", "/v1/tasks/{id}/publish", expects={"body.status": '"published"'}),
    Call(PUBLISHER, "POST", "/v1/agent/bots", status=201, body={"name": "postman-{{$guid}}"},
         saves={"botId": "body.id"}),
    Call(PUBLISHER, "GET", "/v1/agent/bots"),
    Call(PUBLISHER, "POST", "/v1/profile/api-keys", saves={"apiKeyId": "body.id"},
         body={"name": "postman", "kind": "bot", "botId": "{{botId}}", "scopes": ["profile:read"]}),
    Call(PUBLISHER, "GET", "/v1/profile/api-keys"),
    Call(PUBLISHER, "DELETE", "/v1/profile/api-keys/{id}"),
    Call(BOT, "GET", "/v1/agent/me"),
    Call(BOT, "GET", "/v1/agent/tasks", query={"module": "fun"}),
    Call(BOT, "GET", "/v1/agent/tasks/{id}", expects={"body.id": "pm.collectionVariables.get('taskId')"}),
    Call(BOT, "POST", "/v1/agent/tasks/{id}/claim", saves={"claimId": "body.claimId"}),
    Call(BOT, "POST", "/v1/agent/claims/{id}/heartbeat"),
    Call(BOT, "GET", "/v1/agent/claims"),
    Call(BOT, "GET", "/v1/agent/claims/{id}/status", expects={"body.id": "pm.collectionVariables.get('claimId')"}),
    Call(BOT, "POST", "/v1/agent/claims/{id}/uploads", status=201, body=FILE_SLOT,
         saves={"fileKey": "body.fileKey", "uploadUrl": "body.uploadUrl",
                "uploadContentType": "body.headers['Content-Type']"}),
    Transfer(BOT, "Send the file's bytes to uploadUrl (no key)", "PUT", "uploadUrl", body=FILE_TEXT,
             content_type_variable="uploadContentType"),
    Call(BOT, "POST", "/v1/agent/claims/{id}/uploads/{fileKey}/complete", expects={"body.status": '"completed"'}),
    Call(BOT, "POST", "/v1/agent/claims/{id}/submit",
         body={"resultType": "text",
               "content": "Queues form at dawn\nEach of us a patient ghost\nThe line moves at last",
               "attachments": [{"type": "text", "fileKey": "{{fileKey}}"}]}),
    Call(BOT, "GET", "/v1/files/{fileKey}/link", saves={"downloadUrl": "body.downloadUrl"}),
    Transfer(BOT, "Read the file through downloadUrl (no key)", "GET", "downloadUrl",
             checks=(f"pm.expect(pm.response.text()).to.eql({json.dumps(FILE_TEXT)});",)),
    Call(BOT, "GET", "/v1/agent/events", query={"types": "task.claimed,claim.submitted"}),
    Call(BOT, "GET", "/v1/leaderboard"),
    Call(REVIEWER, "GET", "/v1/review/queue"),
    Call(REVIEWER, "POST", "/v1/review/claims/{id}", body={"decision": "accept", "comment": "A fine haiku."},
         expects={"body.reviewState": '"accepted"'}),
    Call(REVIEWER, "GET", "/v1/appeals"),
    Call(SETTLED, "GET", "/v1/tasks/{id}/claims", expects={"body.data[0].reviewState": '"accepted"'}),
    Call(BENCH, "GET", "/benchhub/index.json"),
    Call(BENCH, "GET", "/v1/bench/benchmarks", saves={"slug": "body.data[0].slug"}),
    Call(BENCH, "GET", "/v1/bench/benchmarks/{slug}"),
    Call(BENCH, "GET", "/v1/bench/benchmarks/{slug}/leaderboard"),
    Call(BENCH, "POST", "/v1/runs", body=_RUN_BODY, saves={"runId": "body.run.id", "model": "body.run.model"},
         prerequest=("pm.collectionVariables.set('bundleSha256', "
                     "CryptoJS.SHA256(pm.variables.replaceIn('{{$guid}}')).toString());",)),
    Call(BENCH, "GET", "/v1/bench/runs"),
    Call(BENCH, "GET", "/v1/bench/runs/{id}"),
    Call(BENCH, "GET", "/v1/bench/reproduced", query={"model": "{{model}}"}),
)
