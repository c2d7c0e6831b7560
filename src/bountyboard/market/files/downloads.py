"""Reading stored files: who may, through which short-lived link, and with which headers.

The holder of the claim (its bot, or its operator) may read a claim's files with ``claims:read``; once a
file is attached to a submission, whoever may review the task (its publisher, reviewers, admins) may read
it with ``claims:review`` (or ``claims:read``). Anybody else gets the same 404 as for a file that does not
exist. Files are always served by the service, never by the store, so every answer carries ``nosniff`` and
a sandboxing policy, and only raster images and audio are shown inline: an SVG or an HTML page is a
download and never runs in the site's origin.

A file is served only as it was checked: a stored object of another size is refused before anything
is sent, and the bytes are hashed as they stream, the last of them sent only once all match the
recorded sha256, so a changed object ends as a broken download, never as a whole other file.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Iterable
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.clock import rfc3339
from bountyboard.config import get_settings
from bountyboard.contract.artifacts import RASTER_IMAGES
from bountyboard.contract.scopes import Scope
from bountyboard.errors import ErrorCode, Problem, not_found
from bountyboard.market.files import links, storage
from bountyboard.market.files.content_types import shown_inline
from bountyboard.market.files.models import Upload, UploadStatus
from bountyboard.market.files.schemas import DownloadLink
from bountyboard.market.models import Claim, Task
from bountyboard.market.permissions import may_review
from bountyboard.market.schemas import ClaimDetail

# What the file answers carry; the site's security headers keep this policy for these paths.
FILE_PATH_PREFIX = "/v1/files/"
FILE_POLICY = "sandbox; default-src 'none'"

log = logging.getLogger("bountyboard.files")


class StoredFileChanged(Exception):
    """The stored bytes of a file no longer hash to its recorded sha256 (raised mid-download, cutting it)."""


# A key with neither scope reads no file: refused up front, whoever holds it.
READING_SCOPES = (Scope.CLAIMS_READ, Scope.CLAIMS_REVIEW)


def _may_read(actor: Actor, task: Task, claim: Claim, upload: Upload) -> bool:
    if actor.bot is not None:
        return actor.has(Scope.CLAIMS_READ) and claim.bot_id == actor.bot.id
    if claim.operator_id == actor.user_id:
        return actor.has(Scope.CLAIMS_READ)
    return upload.attached_at is not None and may_review(actor.user, task)


def _require_reading_scope(actor: Actor) -> None:
    if not any(actor.has(scope) for scope in READING_SCOPES):
        raise Problem(403, ErrorCode.INSUFFICIENT_SCOPE,
                      "Reading a file needs the scope claims:read (the claim's holder) or claims:review "
                      "(a reviewer of the task), which the API key does not carry.",
                      requiredScopes=[str(Scope.CLAIMS_READ)])


def content_path(file_key: str) -> str:
    """A signed, relative link to a file's bytes (for pages, which the caller has already authorised)."""
    path, _ = links.signed_path("download", f"{FILE_PATH_PREFIX}{file_key}/content", file_key,
                                timedelta(seconds=get_settings().download_link_ttl_seconds))
    return path


def page_links(details: Iterable[ClaimDetail]) -> dict[str, dict[str, str | None]]:
    """For a page whose viewer may review these claims: each attached file's signed link, and how to show it
    (``image`` or ``audio`` inline; anything else is only a download)."""
    links_by_key: dict[str, dict[str, str | None]] = {}
    for detail in details:
        for item in detail.submission.attachments if detail.submission else []:
            key, mime_type = item.get("fileKey"), str(item.get("mimeType", ""))
            if key:
                show = ("image" if mime_type in RASTER_IMAGES else "audio") if shown_inline(mime_type) else None
                links_by_key[key] = {"href": content_path(key), "show": show}
    return links_by_key


async def download_link(session: AsyncSession, actor: Actor | None, file_key: str) -> DownloadLink:
    upload = await session.get(Upload, file_key)
    if actor is not None:
        _require_reading_scope(actor)
    if actor is None or upload is None or upload.status != UploadStatus.COMPLETED:
        raise not_found("file", file_key)
    claim = await session.get(Claim, upload.claim_id)
    task = await session.get(Task, upload.task_id)
    assert claim is not None and task is not None
    if not _may_read(actor, task, claim, upload):
        raise not_found("file", file_key)
    path, expires_at = links.signed_path("download", f"{FILE_PATH_PREFIX}{file_key}/content", file_key,
                                         timedelta(seconds=get_settings().download_link_ttl_seconds))
    return DownloadLink(fileKey=upload.id, downloadUrl=get_settings().effective_base_url + path,
                        expiresAt=rfc3339(expires_at) or "", fileName=upload.file_name, mimeType=upload.mime_type,
                        sizeBytes=upload.size_bytes, sha256=upload.sha256)


def _disposition(upload: Upload) -> str:
    kind = "inline" if shown_inline(upload.mime_type) else "attachment"
    fallback = "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\;' else "_"
                       for ch in upload.file_name)
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(upload.file_name, safe='')}"


async def serve(session: AsyncSession, file_key: str, expires: int, signature: str) -> StreamingResponse:
    links.check("download", file_key, expires, signature)
    upload = await session.get(Upload, file_key)
    if upload is None or upload.status != UploadStatus.COMPLETED:
        raise not_found("file", file_key)
    await session.close()  # no connection is held while the bytes stream
    stored_size = await storage.size_of(upload.object_key)
    if stored_size != upload.size_bytes:
        log.error("stored file %s at %s has %s bytes, not the checked %s", upload.id, upload.object_key,
                  stored_size, upload.size_bytes)
        raise Problem(409, ErrorCode.STORED_FILE_MISMATCH,
                      f"The stored bytes of {file_key} are not the ones that were checked; they are not served.")
    headers: dict[str, Any] = {
        "Content-Disposition": _disposition(upload),
        "Content-Length": str(upload.size_bytes),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": FILE_POLICY,
        "Cache-Control": "private, no-store",
    }
    return StreamingResponse(_as_checked(upload), media_type=upload.mime_type, headers=headers)


async def _as_checked(upload: Upload) -> AsyncIterator[bytes]:
    """The stored bytes, each chunk sent once the next has been read, and the last only once all of
    them hash to the recorded sha256."""
    digest = hashlib.sha256()
    held: bytes | None = None
    async for chunk in storage.read(upload.object_key):
        if held is not None:
            yield held
        digest.update(chunk)
        held = chunk
    if digest.hexdigest() != upload.sha256:
        raise StoredFileChanged(f"the stored bytes of {upload.id} at {upload.object_key} do not hash to its sha256")
    if held is not None:
        yield held
