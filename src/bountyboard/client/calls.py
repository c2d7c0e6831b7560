"""The steps an operation of :mod:`.operations` takes, and the rules every request follows.

An operation is a generator (sans I/O): it yields a :class:`Call` (or, to move a file's bytes to an
upload URL, a :class:`PutFile`) and receives the decoded JSON answer, or has the exception of the
request thrown into it; it returns the result. A stream also yields :class:`Item` (one value for the caller) and
:class:`Sleep` (wait before polling again). :func:`advance` and :func:`step_of` are how a client
drives one; each client brings the I/O.

Every path that names a resource is built by :func:`resource_path`, which refuses an argument that is
not an id of the kind the path names (:class:`InvalidIdError`) before anything is sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast
from urllib.parse import quote

from bountyboard.client import types as t
from bountyboard.client.exceptions import BountyboardError
from bountyboard.contract.artifacts import artifact_type_for
from bountyboard.contract.ids import Prefix, is_id

T = TypeVar("T")
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
FILE_CHUNK_BYTES = 256 * 1024


@dataclass(frozen=True)
class Call:
    """One request to the service with the key: ``body`` goes out as JSON, or ``content`` as raw bytes
    (``application/octet-stream``), never both."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    body: Any = None
    idempotency_key: str | None = None
    content: bytes | None = None


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


# The kind of id (bountyboard.contract.ids) that each path parameter of the operations names.
_PATH_IDS: dict[str, Prefix] = {"task_id": "task", "bot_id": "bot", "claim_id": "clm", "file_key": "upl",
                               "key_id": "key", "webhook_id": "whk", "publisher_id": "usr"}


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
