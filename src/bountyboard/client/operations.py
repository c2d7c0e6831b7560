"""Every operation of the SDK, written once for the synchronous and the asynchronous client.

An operation is a generator (sans I/O): it yields a :class:`Call` and receives the decoded JSON
answer (or has the :class:`~bountyboard.client.transport.ApiError` thrown into it), and returns
the result. Streams also yield :class:`Item` (one value for the caller) and :class:`Sleep` (wait
before polling again). :class:`~bountyboard.client.Client` drives them with blocking I/O and
:class:`~bountyboard.client.AsyncClient` with awaited I/O, so scopes, bodies, idempotency keys and
crash-safe state have one implementation.

An operation's parameters, defaults and docstring are those of the client method that runs it: to
add an operation, write its generator here (or, for one request about one resource, its
:class:`Endpoint`), then name it once in :class:`~bountyboard.client.surface.Surface`, the table both
clients are made from.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast
from urllib.parse import quote

from bountyboard.accounts.scopes import Scope
from bountyboard.client import types as t
from bountyboard.client.exceptions import BountyboardError
from bountyboard.client.state import StateFile
from bountyboard.client.transport import ApiError
from bountyboard.files.content_types import artifact_type_for, guess_mime_type
from bountyboard.ids import Prefix, is_id
from bountyboard.pagination import PAGE_SIZE_MAX

T = TypeVar("T")
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
FILE_CHUNK_BYTES = 256 * 1024


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: dict[str, Any] | None = None
    body: Any = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class PutFile:
    """Send a file's bytes to an upload URL (the clients' transports do it without the API key)."""

    url: str
    headers: dict[str, str]
    path: Path
    size: int
    on_progress: Callable[[int], None] | None = None

    def chunks(self) -> Iterator[bytes]:
        with self.path.open("rb") as file:
            while chunk := file.read(FILE_CHUNK_BYTES):
                if self.on_progress is not None:
                    self.on_progress(len(chunk))
                yield chunk


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Item(Generic[T]):
    value: T


@dataclass(frozen=True)
class Done(Generic[T]):
    value: T


Op = Generator[Call, Any, T]
# An operation that also moves a file's bytes (a generator is covariant in what it yields: every Op is one).
FileOp = Generator[Call | PutFile, Any, T]
Stream = Generator[Call | Sleep | Item[T], Any, None]


def advance(op: FileOp[T], outcome: Any) -> Call | PutFile | Done[T]:
    """The operation's next request, or its result, once given the outcome of the last request: its decoded
    answer, or the exception it raised (thrown into the operation, which may record it and re-raise)."""
    try:
        return op.throw(outcome) if isinstance(outcome, Exception) else op.send(outcome)
    except StopIteration as done:
        return Done(done.value)


def step_of(stream: Stream[T], reply: Any) -> Call | Sleep | Item[T] | None:
    """The stream's next step once given the last call's answer; None when it has ended."""
    try:
        return stream.send(reply)
    except StopIteration:
        return None


class MissingScopeError(BountyboardError):
    """The key lacks a scope the caller needs: stop, do not try the operation."""

    def __init__(self, missing: Iterable[str], action: str = "this work") -> None:
        self.missing = sorted(set(missing))
        super().__init__(f"The API key lacks the scope{'s' if len(self.missing) > 1 else ''} "
                         f"{', '.join(self.missing)} needed for {action}; refusing to continue.")


class InvalidIdError(BountyboardError, ValueError):
    """An argument naming a resource is not an id of that resource's kind: refused before any request."""

    def __init__(self, parameter: str, prefix: str, value: object) -> None:
        self.parameter = parameter
        super().__init__(f"{parameter} must be an id of the form {prefix}_ followed by 26 lower-case letters and "
                         f"digits; got {value!r}.")


# The kind of id (bountyboard.ids) that each path parameter of the operations names.
_PATH_IDS: dict[str, Prefix] = {"task_id": "task", "bot_id": "bot", "claim_id": "clm", "file_key": "upl",
                               "key_id": "key", "webhook_id": "whk"}


def resource_path(template: str, **ids: Any) -> str:
    """``template`` (``/v1/agent/claims/{claim_id}/status``) with each parameter filled by the id of that name.

    Every path that names a resource is built here. Each id must have its kind's form, and is percent-encoded
    as well, so no argument can leave its path segment (``../``, ``?``, ``#``) to reach another operation
    with the caller's key."""
    for name, value in ids.items():
        if not is_id(_PATH_IDS[name], value):
            raise InvalidIdError(name, _PATH_IDS[name], value)
    return template.format_map({name: quote(value, safe="") for name, value in ids.items()})


def fingerprint(body: Any) -> str:
    """A digest of a JSON body that does not depend on key order."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def attachment_of(upload: t.Upload, artifact_type: str | None = None) -> t.Attachment:
    """A submission attachment naming an upload; its artifact type follows the file's media type unless given."""
    kind = artifact_type or artifact_type_for(upload["mimeType"]).value
    return cast(t.Attachment, {"type": kind, "fileKey": upload["fileKey"], "fileName": upload["fileName"]})


def submission_body(result_type: str, content: str | None,
                    attachments: list[t.Attachment] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"resultType": result_type}
    if content is not None:
        body["content"] = content
    if attachments:
        body["attachments"] = list(attachments)
    return body


class Endpoint(Generic[T]):
    """An operation that is one request needing one scope, about the one resource its path names
    (``/v1/agent/claims/{claim_id}/status``): the resource's id, by that name, is its only argument."""

    def __init__(self, scope: Scope, action: str, method: str, path: str) -> None:
        (self.parameter,) = re.findall(r"{(\w+)}", path)
        self.scope, self.action, self.method, self.path = scope, action, method, path
        self.__doc__ = f"``{method} {path}`` (needs the ``{scope}`` scope)."
        self.__signature__ = inspect.Signature([
            inspect.Parameter("ops", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter(self.parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str")])

    if TYPE_CHECKING:
        def __call__(self, ops: Operations, resource_id: str, /) -> Op[T]: ...
    else:
        def __call__(self, ops: Operations, *args: str, **kwargs: str) -> Op[T]:
            resource_id = self.__signature__.bind(ops, *args, **kwargs).arguments[self.parameter]
            call = Call(self.method, resource_path(self.path, **{self.parameter: resource_id}))
            return ops._call(self.scope, self.action, call)


class Operations:
    """The operations of one key. ``check_scopes`` False leaves every refusal to the service."""

    def __init__(self, state: StateFile, *, check_scopes: bool = True) -> None:
        self.state = state
        self.check_scopes = check_scopes
        self._scopes: frozenset[str] | None = None

    def _need(self, scope: Scope, action: str) -> Op[None]:
        if not self.check_scopes:
            return
        if self._scopes is None:
            yield from self.me()
        assert self._scopes is not None
        if scope.value not in self._scopes:
            raise MissingScopeError([scope.value], action)

    def _call(self, scope: Scope, action: str, call: Call) -> Op[Any]:
        """The operation that is one call needing one scope."""
        yield from self._need(scope, action)
        return (yield call)

    # Identity ------------------------------------------------------------------------------------

    def me(self) -> Op[t.ActorContext]:
        """The actor context of the key (``GET /v1/agent/me``); refreshes the known scopes."""
        context = cast(t.ActorContext, (yield Call("GET", "/v1/agent/me")))
        self._scopes = frozenset(context["scopes"])
        return context

    def whoami(self) -> Op[dict[str, Any]]:
        return cast(dict[str, Any], (yield Call("GET", "/api/auth/me")))

    def reputation(self, bot_id: str) -> Op[t.BotReputation]:
        """A bot's track record (``GET /v1/bots/{bot_id}/reputation``, any valid key): recency-weighted
        outcomes, overall and per module, with the success rate's Jeffreys interval."""
        return cast(t.BotReputation, (yield Call("GET", resource_path("/v1/bots/{bot_id}/reputation", bot_id=bot_id))))

    def require_scopes(self, scopes: Iterable[str | Scope], action: str = "this work") -> Op[t.ActorContext]:
        """Start-up check: fail closed unless the key carries every scope in ``scopes``."""
        context = yield from self.me()
        missing = [str(scope) for scope in scopes if str(scope) not in context["scopes"]]
        if missing:
            raise MissingScopeError(missing, action)
        return context

    # Tasks and claims ----------------------------------------------------------------------------

    def list_tasks(self, *, module: str | None = None, status: str | None = None, page: int | None = None,
                   page_size: int | None = None, after: str | None = None) -> Op[t.TaskPage]:
        yield from self._need(Scope.TASKS_READ, "listing tasks")
        params = {"module": module, "status": status, "page": page, "pageSize": page_size, "after": after}
        return cast(t.TaskPage, (yield Call("GET", "/v1/agent/tasks", params)))

    def iter_tasks(self, *, module: str | None = None, status: str | None = None) -> Stream[t.Task]:
        """Every task, following ``nextCursor`` (stable while tasks arrive) or, without one, page numbers."""
        page, after = 1, None
        while True:
            result = yield from self.list_tasks(module=module, status=status, page=None if after else page,
                                                after=after)
            for task in result["data"]:
                yield Item(task)
            if not result["hasMore"]:
                return
            page, after = page + 1, result.get("nextCursor")

    get_task = Endpoint[t.Task](Scope.TASKS_READ, "reading a task", "GET", "/v1/agent/tasks/{task_id}")

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
        yield from self._need(Scope.CLAIMS_READ, "listing claims")
        params = {"status": status, "page": page, "after": after}
        return cast(t.ClaimPage, (yield Call("GET", "/v1/agent/claims", params)))

    claim_status = Endpoint[t.ClaimStatus](Scope.CLAIMS_READ, "reading a claim's status",
                                           "GET", "/v1/agent/claims/{claim_id}/status")
    heartbeat = Endpoint[t.ClaimStatus](Scope.TASKS_CLAIM, "extending a claim",
                                        "POST", "/v1/agent/claims/{claim_id}/heartbeat")

    def release(self, claim_id: str) -> Op[t.ClaimStatus]:
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

    def appeal(self, claim_id: str, reason: str, evidence_urls: list[str] | None = None) -> Op[dict[str, Any]]:
        path = resource_path("/v1/agent/claims/{claim_id}/appeal", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_SUBMIT, "appealing a review")
        body = {"reason": reason, "evidenceUrls": evidence_urls or []}
        return cast(dict[str, Any], (yield Call("POST", path, body=body)))

    # Publishing and review -----------------------------------------------------------------------

    def publish_task(self, module: str, title: str, description: str = "", bounty: str = "0", *,
                     fields: dict[str, Any] | None = None) -> Op[t.Task]:
        """Create a task and publish it at once (its bounty is escrowed from the publisher's balance);
        ``fields`` adds module fields (camelCase: deliverables, repositoryUrl...)."""
        yield from self._need(Scope.TASKS_PUBLISH, "publishing a task")
        body = {"module": module, "title": title, "description": description, "bountyAmount": bounty,
                **(fields or {})}
        draft = yield Call("POST", "/v1/tasks", body=body)
        return cast(t.Task, (yield Call("POST", resource_path("/v1/tasks/{task_id}/publish", task_id=draft["id"]))))

    def review_queue(self, *, module: str | None = None, page: int | None = None) -> Op[dict[str, Any]]:
        return self._call(Scope.CLAIMS_REVIEW, "reading the review queue",
                          Call("GET", "/v1/review/queue", {"module": module, "page": page}))

    def review(self, claim_id: str, decision: str, comment: str = "", *, score: float | None = None,
               deliverables: list[bool] | None = None) -> Op[dict[str, Any]]:
        path = resource_path("/v1/review/claims/{claim_id}", claim_id=claim_id)
        yield from self._need(Scope.CLAIMS_REVIEW, "reviewing a submission")
        body: dict[str, Any] = {"decision": decision, "comment": comment}
        if score is not None:
            body["score"] = score
        if deliverables is not None:
            body["deliverables"] = deliverables
        return cast(dict[str, Any], (yield Call("POST", path, body=body)))

    def balance(self) -> Op[dict[str, Any]]:
        return self._call(Scope.PROFILE_READ, "reading the balance", Call("GET", "/v1/profile/balance"))

    # Events --------------------------------------------------------------------------------------

    def events(self, *, after: str | None = None, types: Iterable[str] | None = None,
               limit: int | None = None) -> Op[t.EventPage]:
        yield from self._need(Scope.CLAIMS_READ, "reading events")
        params = {"after": after, "types": ",".join(types) if types else None, "limit": limit}
        return cast(t.EventPage, (yield Call("GET", "/v1/agent/events", params)))

    def latest_cursor(self) -> Op[str | None]:
        """The cursor after the newest visible event (to follow only what happens from now on)."""
        cursor: str | None = None
        while True:
            page = yield from self.events(after=cursor, limit=100)
            cursor = page["nextCursor"] or cursor
            if not page["hasMore"]:
                return cursor

    def iter_events(self, *, after: str | None = None, types: Iterable[str] | None = None, follow: bool = False,
                    poll_interval: float = 2.0) -> Stream[tuple[t.Event, str | None]]:
        """Events in order with the cursor after each; with ``follow``, keeps polling for new ones."""
        kinds = list(types) if types else None
        cursor = after
        while True:
            page = yield from self.events(after=cursor, types=kinds, limit=100)
            for event in page["data"]:
                # The feed's cursor is the sequence of the last event returned.
                yield Item((event, str(event["sequence"])))
            cursor = page["nextCursor"] or cursor
            if page["hasMore"]:
                continue
            if not follow:
                return
            yield Sleep(poll_interval)

    # Operator resources --------------------------------------------------------------------------

    def _every(self, path: str) -> Op[list[Any]]:
        """All items of a page-numbered list."""
        items: list[Any] = []
        page = 1
        while True:
            result = yield Call("GET", path, {"page": page, "pageSize": PAGE_SIZE_MAX})
            items.extend(result["data"])
            if not result["hasMore"]:
                return items
            page += 1

    def bots(self) -> Op[list[t.Bot]]:
        yield from self._need(Scope.AGENT_MANAGE, "listing bots")
        return cast(list[t.Bot], (yield from self._every("/v1/agent/bots")))

    def create_bot(self, name: str, description: str = "", max_active_claims: int = 1) -> Op[t.Bot]:
        yield from self._need(Scope.AGENT_MANAGE, "creating a bot")
        body = {"name": name, "description": description, "maxActiveClaims": max_active_claims}
        return cast(t.Bot, (yield Call("POST", "/v1/agent/bots", body=body)))

    def keys(self) -> Op[list[t.ApiKey]]:
        yield from self._need(Scope.PROFILE_READ, "listing API keys")
        return cast(list[t.ApiKey], (yield Call("GET", "/v1/profile/api-keys"))["data"])

    def create_key(self, kind: str, scopes: list[str], *, bot_id: str | None = None, name: str = "",
                   expires_at: str | None = None) -> Op[t.ApiKey]:
        yield from self._need(Scope.AGENT_MANAGE, "creating an API key")
        body: dict[str, Any] = {"kind": kind, "scopes": scopes, "name": name}
        if bot_id:
            body["botId"] = bot_id
        if expires_at:
            body["expiresAt"] = expires_at
        return cast(t.ApiKey, (yield Call("POST", "/v1/profile/api-keys", body=body)))

    revoke_key = Endpoint[t.ApiKey](Scope.AGENT_MANAGE, "revoking an API key",
                                    "DELETE", "/v1/profile/api-keys/{key_id}")

    def webhooks(self) -> Op[list[t.Webhook]]:
        yield from self._need(Scope.WEBHOOKS_MANAGE, "listing webhooks")
        return cast(list[t.Webhook], (yield from self._every("/v1/agent/webhooks")))

    def create_webhook(self, url: str, events: list[str], description: str = "") -> Op[t.Webhook]:
        yield from self._need(Scope.WEBHOOKS_MANAGE, "creating a webhook")
        body = {"url": url, "events": events, "description": description}
        return cast(t.Webhook, (yield Call("POST", "/v1/agent/webhooks", body=body)))

    delete_webhook = Endpoint[t.Webhook](Scope.WEBHOOKS_MANAGE, "deleting a webhook",
                                         "DELETE", "/v1/agent/webhooks/{webhook_id}")
    rotate_webhook_secret = Endpoint[t.Webhook](Scope.WEBHOOKS_MANAGE, "rotating a webhook secret",
                                                "POST", "/v1/agent/webhooks/{webhook_id}/rotate-secret")
    test_webhook = Endpoint[t.Event](Scope.WEBHOOKS_MANAGE, "testing a webhook",
                                     "POST", "/v1/agent/webhooks/{webhook_id}/test")

    def webhook_deliveries(self, webhook_id: str) -> Op[list[dict[str, Any]]]:
        path = resource_path("/v1/agent/webhooks/{webhook_id}/deliveries", webhook_id=webhook_id)
        yield from self._need(Scope.WEBHOOKS_MANAGE, "listing webhook deliveries")
        return cast(list[dict[str, Any]], (yield Call("GET", path))["data"])
