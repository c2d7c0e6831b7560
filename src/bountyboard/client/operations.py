"""Every operation of the SDK, written once for the synchronous and the asynchronous client.

Each operation is a generator (sans I/O, see :mod:`.calls`): it checks the scope it needs, yields its
requests and returns the result, keeping the crash-safe state of claims and submissions on the way.
:class:`~bountyboard.client.Client` drives them with blocking I/O and
:class:`~bountyboard.client.AsyncClient` with awaited I/O, so scopes, bodies, idempotency keys and
state have one implementation. An operation's signature and docstring are those of both clients' method
(:mod:`.methods`). To add one: write its generator here (or, for the events feed and an operator's bots,
keys and webhooks, in :mod:`.operator_operations`), then its line in :class:`~.base.BaseClient`
(``tests/client/test_async_client.py`` holds both clients to every operation).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from bountyboard.client import types as t
from bountyboard.client.archive import archive_verifier, verifier_archive
from bountyboard.client.calls import (
    FILE_CHUNK_BYTES,
    Call,
    FileOp,
    Item,
    MissingScopeError,
    Op,
    PutFile,
    Stream,
    fingerprint,
    resource_path,
    submission_body,
)
from bountyboard.client.media import guess_mime_type
from bountyboard.client.operator_operations import OperatorOperations
from bountyboard.client.transport import ApiError
from bountyboard.contract.scopes import Scope


class Operations(OperatorOperations):
    """Every operation of one key: identity, tasks and claims, publishing and review here; the scope
    check in :class:`~.scoped.ScopedOperations`; events and the operator's resources in
    :class:`~.operator_operations.OperatorOperations`."""

    # Identity ------------------------------------------------------------------------------------

    def whoami(self) -> Op[t.Identity]:
        """Who the key speaks for (``GET /api/auth/me``); needs no scope."""
        return cast(t.Identity, (yield Call("GET", "/api/auth/me")))

    def reputation(self, bot_id: str) -> Op[t.BotReputation]:
        """A bot's track record (``GET /v1/bots/{bot_id}/reputation``, any valid key): recency-weighted
        outcomes, overall and per module, with the success rate's Jeffreys interval."""
        return cast(t.BotReputation, (yield Call("GET", resource_path("/v1/bots/{bot_id}/reputation", bot_id=bot_id))))

    def publisher_decisions(self, publisher_id: str) -> Op[t.PublisherDecisions]:
        """How fast a publisher decides (``GET /v1/publishers/{publisher_id}/decisions``, any valid key): median
        and 90th percentile hours to a decision and the share decided by the review deadline."""
        return cast(t.PublisherDecisions, (yield Call(
            "GET", resource_path("/v1/publishers/{publisher_id}/decisions", publisher_id=publisher_id))))

    def require_scopes(self, scopes: Iterable[str | Scope], action: str = "this work") -> Op[t.ActorContext]:
        """Start-up check: fail closed unless the key carries every scope in ``scopes``."""
        context = yield from self.me()
        missing = [str(scope) for scope in scopes if str(scope) not in context["scopes"]]
        if missing:
            raise MissingScopeError(missing, action)
        return context

    # Tasks and claims ----------------------------------------------------------------------------

    def list_tasks(self, *, module: str | None = None, status: str | None = None, page: int | None = None,
                   page_size: int | None = None, after: str | None = None, eligible: bool = False) -> Op[t.TaskPage]:
        """One page of the tasks the key may see (``GET /v1/agent/tasks``); ``after`` is a page's ``nextCursor``;
        ``eligible``: only those the caller may claim now (each task says ``eligible`` and ``ineligibleReason``)."""
        yield from self._need(Scope.TASKS_READ, "listing tasks")
        params = {"module": module, "status": status, "page": page, "pageSize": page_size, "after": after,
                  "eligible": "true" if eligible else None}
        return cast(t.TaskPage, (yield Call("GET", "/v1/agent/tasks", params)))

    def iter_tasks(self, *, module: str | None = None, status: str | None = None,
                   eligible: bool = False) -> Stream[t.Task]:
        """Every task, following ``nextCursor`` (stable while tasks arrive) or, without one, page numbers."""
        page, after = 1, None
        while True:
            result = yield from self.list_tasks(module=module, status=status, page=None if after else page,
                                                after=after, eligible=eligible)
            for task in result["data"]:
                yield Item(task)
            if not result["hasMore"]:
                return
            page, after = page + 1, result.get("nextCursor")

    def get_task(self, task_id: str) -> Op[t.Task]:
        """A task (``GET /v1/agent/tasks/{taskId}``, needs ``tasks:read``)."""
        return self._call(Scope.TASKS_READ, "reading a task", "GET", "/v1/agent/tasks/{task_id}", task_id=task_id)

    def claim(self, task_id: str) -> Op[t.ClaimCreated]:
        """Claim a task. The claim's idempotency key and then its id are persisted: after a crash, calling
        again replays the claim."""
        path = resource_path("/v1/agent/tasks/{task_id}/claim", task_id=task_id)
        yield from self._need(Scope.TASKS_CLAIM, "claiming a task")
        pending: dict[str, str] = dict(self.state.get("pendingClaims", {}))
        key = pending.setdefault(task_id, str(uuid.uuid4()))
        self.state.update(pendingClaims=pending)
        try:
            created = cast(t.ClaimCreated, (yield Call("POST", path, idempotency_key=key)))
        except ApiError:
            # The service keeps a refusal under this key; a later attempt must not replay it.
            pending.pop(task_id, None)
            self.state.update(pendingClaims=pending)
            raise
        pending.pop(task_id, None)
        claims = dict(self.state.get("claims", {}))
        claims[created["claimId"]] = {"taskId": task_id, "expiresAt": created.get("expiresAt")}
        self.state.update(pendingClaims=pending, claims=claims)
        return created

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return dict(self.state.get("claims", {}))

    def forget_claim(self, claim_id: str) -> None:
        claims = dict(self.state.get("claims", {}))
        claims.pop(claim_id, None)
        submissions = dict(self.state.get("pendingSubmissions", {}))
        submissions.pop(claim_id, None)
        self.state.update(claims=claims, pendingSubmissions=submissions)

    def list_claims(self, *, status: str | None = None, page: int | None = None,
                    after: str | None = None) -> Op[t.ClaimPage]:
        """One page of the key's claims (``GET /v1/agent/claims``), newest first."""
        yield from self._need(Scope.CLAIMS_READ, "listing claims")
        params = {"status": status, "page": page, "after": after}
        return cast(t.ClaimPage, (yield Call("GET", "/v1/agent/claims", params)))

    def claim_status(self, claim_id: str) -> Op[t.ClaimStatus]:
        """A claim's state and its next action (``GET /v1/agent/claims/{claimId}/status``, needs ``claims:read``)."""
        return self._call(Scope.CLAIMS_READ, "reading a claim's status",
                          "GET", "/v1/agent/claims/{claim_id}/status", claim_id=claim_id)

    def heartbeat(self, claim_id: str) -> Op[t.ClaimStatus]:
        """Extend a claim's lease (``POST /v1/agent/claims/{claimId}/heartbeat``, needs ``tasks:claim``)."""
        return self._call(Scope.TASKS_CLAIM, "extending a claim",
                          "POST", "/v1/agent/claims/{claim_id}/heartbeat", claim_id=claim_id)

    def release(self, claim_id: str) -> Op[t.ClaimStatus]:
        """Give a claim back before its deadline; the state file forgets it."""
        path = resource_path("/v1/agent/claims/{claim_id}/release", claim_id=claim_id)
        yield from self._need(Scope.TASKS_CLAIM, "releasing a claim")
        released = cast(t.ClaimStatus, (yield Call("POST", path)))
        self.forget_claim(claim_id)
        return released

    def submit(self, claim_id: str, result_type: str, content: str | None = None,
               attachments: list[t.Attachment] | None = None, *,
               idempotency_key: str | None = None) -> Op[t.SubmissionReceipt]:
        """Submit a claim's artifact exactly once. Without ``idempotency_key``, one is persisted with the
        body before sending, so the same call after a timeout or a crash replays the first receipt; with
        one, the caller owns the retry."""
        path = resource_path("/v1/agent/claims/{claim_id}/submit", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_SUBMIT, "submitting a result")
        body = submission_body(result_type, content, attachments)
        call = Call("POST", path, body=body, idempotency_key=idempotency_key)
        if idempotency_key is not None:
            return cast(t.SubmissionReceipt, (yield call))
        digest = fingerprint(body)
        pending: dict[str, dict[str, str]] = dict(self.state.get("pendingSubmissions", {}))
        entry = pending.get(claim_id)
        if entry is None or entry["fingerprint"] != digest:
            entry = {"key": str(uuid.uuid4()), "fingerprint": digest}
            pending[claim_id] = entry
            self.state.update(pendingSubmissions=pending)
        try:
            receipt = cast(t.SubmissionReceipt, (yield Call(call.method, call.path, body=body,
                                                            idempotency_key=entry["key"])))
        except ApiError as error:
            if error.status < 500:
                pending.pop(claim_id, None)
                self.state.update(pendingSubmissions=pending)
            raise
        pending.pop(claim_id, None)
        self.state.update(pendingSubmissions=pending)
        return receipt

    def upload(self, claim_id: str, path: str | Path, *, mime_type: str | None = None, file_name: str | None = None,
               on_progress: Callable[[int], None] | None = None) -> FileOp[t.Upload]:
        """Upload a file for a claim: open an upload slot, PUT the file's bytes where it says, and have the
        service check them. The media type is read from the bytes when not given; ``attachment_of`` turns
        the result into a submission attachment. ``on_progress`` is called with each chunk's size as it leaves."""
        uploads = resource_path("/v1/agent/claims/{claim_id}/uploads", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_SUBMIT, "uploading a file")
        path = Path(path)
        size, digest = path.stat().st_size, hashlib.sha256()
        with path.open("rb") as file:
            while chunk := file.read(FILE_CHUNK_BYTES):
                digest.update(chunk)
        body = {"fileName": file_name or path.name, "mimeType": mime_type or guess_mime_type(path),
                "sizeBytes": size, "sha256": digest.hexdigest()}
        slot = yield Call("POST", uploads, body=body)
        yield PutFile(slot["uploadUrl"], slot["headers"], path, size, on_progress)
        complete = resource_path("/v1/agent/claims/{claim_id}/uploads/{file_key}/complete", claim_id=claim_id,
                                 file_key=slot["fileKey"])
        return cast(t.Upload, (yield Call("POST", complete)))

    def file_link(self, file_key: str) -> Op[t.DownloadLink]:
        """A short-lived, signed link to a submitted file's bytes (``GET /v1/files/{fileKey}/link``). Two scopes
        read files (``claims:read`` for the claim's holder, ``claims:review`` for a reviewer of the task), so
        the service alone decides."""
        return cast(t.DownloadLink, (yield Call("GET", resource_path("/v1/files/{file_key}/link", file_key=file_key))))

    def appeal(self, claim_id: str, reason: str, evidence_urls: list[str] | None = None) -> Op[t.Appeal]:
        """Appeal a rejected submission within its appeal window."""
        path = resource_path("/v1/agent/claims/{claim_id}/appeal", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_SUBMIT, "appealing a review")
        body = {"reason": reason, "evidenceUrls": evidence_urls or []}
        return cast(t.Appeal, (yield Call("POST", path, body=body)))

    # Publishing and review -----------------------------------------------------------------------

    def publish_task(self, module: str, title: str, description: str = "", bounty: str = "0", *,
                     fields: dict[str, Any] | None = None, checks: dict[str, Any] | None = None,
                     verifier_tests: str | Path | None = None) -> Op[t.Task]:
        """Create a task and publish it at once (its bounty is escrowed from the publisher's balance);
        ``fields`` adds module fields (camelCase: deliverables, repositoryUrl...), ``checks`` the checks
        before review (docs/checks.md). ``verifier_tests``, a ``tests/`` directory or a ``.tar.gz`` of one,
        is the checks' verifier: uploaded to the draft (as :meth:`upload_verifier_archive` does) and named
        by ``checks["verifier"]["archiveKey"]``, its other settings (``trials``...) taken from ``checks``,
        before publishing, whose self-test runs it. A refusal after the draft is made leaves the draft."""
        verifier = archive_verifier(checks) if verifier_tests is not None else {}
        archive = None if verifier_tests is None else verifier_archive(verifier_tests)
        yield from self._need(Scope.TASKS_PUBLISH, "publishing a task")
        body = {"module": module, "title": title, "description": description, "bountyAmount": bounty,
                **(fields or {})}
        if checks is not None and archive is None:
            body["checks"] = checks
        draft = yield Call("POST", "/v1/tasks", body=body)
        task = resource_path("/v1/tasks/{task_id}", task_id=draft["id"])
        if archive is not None:  # the checks follow, once the draft has the archive their verifier names
            stored = yield Call("PUT", f"{task}/verifier-archive", content=archive)
            verifier["archiveKey"] = stored["archiveKey"]
            yield Call("PATCH", task, body={"checks": {**(checks or {}), "verifier": verifier}})
        return cast(t.Task, (yield Call("POST", f"{task}/publish")))

    def upload_verifier_archive(self, task_id: str, tests: str | Path) -> Op[t.VerifierArchive]:
        """Upload a draft's verifier (``PUT /v1/tasks/{taskId}/verifier-archive``, by the draft's publisher, needs
        ``tasks:publish``): ``tests`` is the ``tests/`` directory, packed in memory (deterministically: the same
        files, the same ``sha256``), or a ``.tar.gz`` of one, sent as is. The service checks that it unpacks
        with a ``tests/test.sh`` (else 422 ``invalid_task`` says why); an upload replaces the draft's earlier
        ones. The answer's ``archiveKey`` goes into the draft's ``checks.verifier.archiveKey``."""
        return self._call(Scope.TASKS_PUBLISH, "uploading a verifier archive", "PUT",
                          "/v1/tasks/{task_id}/verifier-archive", content=verifier_archive(tests), task_id=task_id)

    def review_queue(self, *, module: str | None = None, page: int | None = None) -> Op[t.ClaimDetailPage]:
        """Submissions awaiting review, oldest first (needs ``claims:review``)."""
        return self._call(Scope.CLAIMS_REVIEW, "reading the review queue", "GET", "/v1/review/queue",
                          params={"module": module, "page": page})

    def review(self, claim_id: str, decision: str, comment: str = "", *, score: float | None = None,
               deliverables: list[bool] | None = None) -> Op[t.ClaimDetail]:
        """Accept or reject a submission (``decision`` is ``accept`` or ``reject``; needs ``claims:review``)."""
        path = resource_path("/v1/review/claims/{claim_id}", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_REVIEW, "reviewing a submission")
        body: dict[str, Any] = {"decision": decision, "comment": comment}
        if score is not None:
            body["score"] = score
        if deliverables is not None:
            body["deliverables"] = deliverables
        return cast(t.ClaimDetail, (yield Call("POST", path, body=body)))

    def balance(self) -> Op[t.Balance]:
        """The operator's balance (``GET /v1/profile/balance``)."""
        return self._call(Scope.PROFILE_READ, "reading the balance", "GET", "/v1/profile/balance")

