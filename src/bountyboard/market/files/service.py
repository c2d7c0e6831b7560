"""Uploads from slot to submission: who may upload, what the bytes must be, and what is kept.

An upload slot belongs to one active claim and is used by its holder, who may keep a limited number
of slots open at once. Its bytes are checked (size, sha256 when declared, the real type against the
declared one) before the upload counts as completed; bytes that fail are removed with their slot, so
a refusal leaves nothing behind. A submission's attachment names a completed upload of its own
claim, and takes its size and type from it. Uploads no submission names are swept when they expire;
the files of a claim whose rejection stands are swept once their retention has passed.

One request at a time moves a slot's bytes: the first PUT (or completion) reserves the slot, and
another gets 409 until it has finished. The checked bytes live at the upload's ``object_key``, which
no URL names: on the local store the service's own PUT spools and checks the bytes before storing
them there; on S3 the presigned URL writes to a staging key, whose object is copied to the final key
and checked there, so a PUT to a URL that is still valid can never change a checked file.

The database lock is never held while bytes move: a flow checks, ends its transaction, moves the
bytes, then locks again and checks once more before it records anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import tempfile
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import IO, Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from bountyboard.accounts.auth import Actor
from bountyboard.clock import now, rfc3339
from bountyboard.config import get_settings
from bountyboard.contract.artifacts import normalise
from bountyboard.errors import ErrorCode, Problem, invalid, not_found
from bountyboard.ids import new_id
from bountyboard.market.files import links, storage
from bountyboard.market.files.content_types import Sniffer, fits_artifact
from bountyboard.market.files.models import OPEN_STATUSES, Upload, UploadStatus
from bountyboard.market.files.schemas import UploadOut, UploadRequest, UploadSlot
from bountyboard.market.locks import locked_claim
from bountyboard.market.models import Claim, ClaimStatus
from bountyboard.market.permissions import held_claim
from bountyboard.market.schemas import Attachment
from bountyboard.market.slots import check_claim_now
from bountyboard.market.transitions import ClaimMove
from bountyboard.storage.engine import get_database
from bountyboard.storage.unit_of_work import transaction

SWEEP_BATCH = 100
_SPOOL_IN_MEMORY = 1024**2


def upload_out(upload: Upload) -> UploadOut:
    return UploadOut(fileKey=upload.id, claimId=upload.claim_id, status=upload.status, fileName=upload.file_name,
                     mimeType=upload.mime_type, sizeBytes=upload.size_bytes, sha256=upload.sha256,
                     expiresAt=None if upload.attached_at else rfc3339(upload.expires_at))


async def _check_open_slots(session: AsyncSession, claim_id: str, api_key_id: str) -> None:
    """429 when the claim, or the key across its claims, already has as many open slots as allowed."""
    settings = get_settings()
    limits = (("claim", Upload.claim_id == claim_id, settings.upload_max_pending_per_claim),
              ("apiKey", Upload.api_key_id == api_key_id, settings.upload_max_pending_per_key))
    for scope, of_scope, limit in limits:
        count, first_end = (await session.execute(select(func.count(), func.min(Upload.expires_at))
                                                  .where(of_scope, Upload.status.in_(OPEN_STATUSES)))).one()
        if count >= limit:
            # The first open slot frees by its URL's end at the latest (completed or swept).
            wait = max(1, math.ceil((first_end - now()).total_seconds()))
            raise Problem(429, ErrorCode.PENDING_UPLOAD_LIMIT,
                          f"The {'claim' if scope == 'claim' else 'API key'} already has {count} open upload slots, "
                          f"the most allowed; complete them, or wait until they expire.",
                          headers={"Retry-After": str(wait)}, limitScope=scope, maxPending=limit)


async def create_slot(session: AsyncSession, actor: Actor, claim_id: str, body: UploadRequest) -> UploadSlot:
    settings = get_settings()
    task, claim = await held_claim(session, actor, claim_id)
    await check_claim_now(session, task, claim, ClaimMove.SUBMIT)  # files are taken while it can be submitted
    if body.sizeBytes > settings.upload_max_file_bytes:
        raise Problem(422, ErrorCode.FILE_TOO_LARGE, f"A file may have at most {settings.upload_max_file_bytes} bytes; "
                                             f"this one has {body.sizeBytes}.", maxBytes=settings.upload_max_file_bytes)
    # int(): PostgreSQL sums integers as numeric.
    used = int(await session.scalar(select(func.coalesce(func.sum(Upload.size_bytes), 0))
                                    .where(Upload.claim_id == claim.id)) or 0)
    if used + body.sizeBytes > settings.upload_max_claim_bytes:
        raise Problem(422, ErrorCode.CLAIM_UPLOAD_LIMIT,
                      f"The files of one claim may add up to {settings.upload_max_claim_bytes} bytes; "
                      f"{used} are taken.", maxBytes=settings.upload_max_claim_bytes, usedBytes=used)
    await _check_open_slots(session, claim.id, actor.key_id)
    ttl = timedelta(seconds=settings.upload_url_ttl_seconds)
    current = now()
    upload = Upload(
        id=new_id("upl"), claim_id=claim.id, task_id=claim.task_id, api_key_id=actor.key_id,
        status=UploadStatus.PENDING, file_name=body.fileName, mime_type=normalise(body.mimeType),
        size_bytes=body.sizeBytes, sha256=body.sha256.lower() if body.sha256 else None, created_at=current,
        expires_at=current + ttl, url_expires_at=current + ttl,
    )
    upload.object_key = f"files/{claim.id}/{upload.id}"
    if storage.presigns():
        upload.staging_key = f"incoming/{claim.id}/{upload.id}"
    session.add(upload)
    await session.flush()
    base = settings.effective_base_url
    if upload.staging_key is not None:
        upload_url = await storage.presigned_put(upload.staging_key, ttl, upload.size_bytes, upload.mime_type)
    else:
        path, _ = links.signed_path("upload", f"/v1/uploads/{upload.id}", upload.id, ttl)
        upload_url = base + path
    return UploadSlot(fileKey=upload.id, uploadUrl=upload_url, method="PUT",
                      headers={"Content-Type": upload.mime_type},
                      expiresAt=rfc3339(upload.expires_at) or "", maxBytes=upload.size_bytes,
                      completeUrl=f"{base}/v1/agent/claims/{claim.id}/uploads/{upload.id}/complete")


# Checking bytes -----------------------------------------------------------------------------------

async def _checked(upload: Upload, chunks: AsyncIterator[bytes], sink: IO[bytes] | None = None) -> str:
    """Read the bytes once, checking them against the slot; their sha256, or a 422 problem."""
    digest, sniffer, size = hashlib.sha256(), Sniffer(upload.mime_type), 0
    async for chunk in chunks:
        size += len(chunk)
        if size > upload.size_bytes:
            raise Problem(422, ErrorCode.SIZE_MISMATCH, f"More bytes than the declared {upload.size_bytes} were sent.")
        digest.update(chunk)
        sniffer.feed(chunk)
        if sink is not None:
            sink.write(chunk)
    if size != upload.size_bytes:
        raise Problem(422, ErrorCode.SIZE_MISMATCH, f"{size} bytes were sent; the slot declared {upload.size_bytes}.")
    if upload.sha256 and digest.hexdigest() != upload.sha256:
        raise Problem(422, ErrorCode.SHA256_MISMATCH,
                      f"The bytes hash to {digest.hexdigest()}, not the declared sha256.")
    mismatch = sniffer.mismatch()
    if mismatch:
        raise Problem(422, ErrorCode.TYPE_MISMATCH, f"Refused {upload.file_name}: {mismatch}.",
                      declaredMimeType=upload.mime_type)
    return digest.hexdigest()


async def _delete_objects(upload: Upload) -> None:
    await storage.delete(upload.object_key)
    if upload.staging_key is not None:
        await storage.delete(upload.staging_key)


async def _discard(session: AsyncSession, upload: Upload) -> None:
    """Remove a refused upload: its bytes and its slot (in the caller's transaction)."""
    await _delete_objects(upload)
    await session.execute(delete(Upload).where(Upload.id == upload.id))


async def _open_upload(session: AsyncSession, file_key: str) -> Upload:
    """An upload whose bytes are not checked yet, its task and claim locked; a claim that can no longer be
    submitted drops it: that refusal keeps the slot's removal (and the claim's lapse)."""
    claim_id = await session.scalar(select(Upload.claim_id).where(Upload.id == file_key))
    if claim_id is None:
        raise not_found("upload", file_key)
    task, claim = await locked_claim(session, claim_id)
    upload = await session.get(Upload, file_key, populate_existing=True)
    if upload is None:
        raise not_found("upload", file_key)
    if upload.status == UploadStatus.COMPLETED:
        raise Problem(409, ErrorCode.UPLOAD_COMPLETED, f"Upload {file_key} is already completed; ask for a new slot.")
    try:
        await check_claim_now(session, task, claim, ClaimMove.SUBMIT)
    except Problem as problem:
        await _discard(session, upload)
        raise problem.keeping_writes() from None
    return upload


class _SlotStaysOpen(Problem):
    """A refusal that is not the bytes' fault (they did not all arrive): the slot is given back for a retry."""


@contextlib.asynccontextmanager
async def _reserved(session: AsyncSession, file_key: str) -> AsyncIterator[Upload]:
    """The slot, held by this request while it moves and checks the bytes; any other request gets 409.

    Three units of work (``transaction``), none open while the bytes move: the slot is reserved; then
    the bytes are kept (``_finish``), or, refused (a problem), removed with their slot, or, when they did
    not all arrive or the service or the store failed, the slot is given back for the client to retry.
    """
    async with transaction(session):
        upload = await _open_upload(session, file_key)
        if upload.status == UploadStatus.RECEIVING:
            raise Problem(409, ErrorCode.UPLOAD_IN_PROGRESS,
                          f"Another request is sending or checking the bytes of {file_key}; read the upload once "
                          f"it has finished.")
        upload.status = UploadStatus.RECEIVING
    try:
        yield upload
    except _SlotStaysOpen:
        async with transaction(session):
            await _release(session, upload)
        raise
    except (Problem, HTTPException):  # HTTPException: a body over the route's limit
        async with transaction(session):
            await _discard(session, upload)
        raise
    except Exception:
        async with transaction(session):
            await _release(session, upload)
        raise


async def _release(session: AsyncSession, upload: Upload) -> None:
    await session.execute(update(Upload).where(Upload.id == upload.id, Upload.status == UploadStatus.RECEIVING)
                          .values(status=UploadStatus.PENDING))


async def _finish(session: AsyncSession, file_key: str, sha256: str) -> UploadOut:
    """Record the checked bytes at the upload's object key as a completed upload, if the claim still takes
    them (else they are dropped with the slot): a unit of work of its own."""
    async with transaction(session):
        upload = await _open_upload(session, file_key)
        upload.status = UploadStatus.COMPLETED
        upload.sha256 = sha256
        upload.completed_at = now()
        upload.expires_at = now() + timedelta(seconds=get_settings().upload_unused_ttl_seconds)
    return upload_out(upload)


async def receive(session: AsyncSession, file_key: str, expires: int, signature: str,
                  body: AsyncIterator[bytes]) -> UploadOut:
    """The service's own upload URL: check the bytes as they stream in, then store them. ``session`` is a
    request session with no transaction (``storage.session.StagedSession``): the flow runs its units of work."""
    links.check("upload", file_key, expires, signature)
    async with _reserved(session, file_key) as upload:
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
            try:
                sha256 = await _checked(upload, body, spool)
            except ClientDisconnect:
                raise _SlotStaysOpen(400, ErrorCode.UPLOAD_ABORTED,
                                     f"The body ended before its {upload.size_bytes} bytes arrived; the slot stays "
                                     f"open: PUT them again.") from None
            spool.seek(0)
            await storage.put(upload.object_key, spool)
        return await _finish(session, file_key, sha256)


async def complete(session: AsyncSession, actor: Actor, claim_id: str, file_key: str) -> UploadOut:
    """After a PUT to a presigned URL: take the staged bytes to the final key and check them there. A
    completed upload is returned as it is. ``session`` as for ``receive``."""
    _task, claim = await held_claim(session, actor, claim_id)
    upload = await session.get(Upload, file_key, populate_existing=True)
    if upload is None or upload.claim_id != claim.id:
        raise not_found("upload", file_key)
    if upload.status == UploadStatus.COMPLETED:
        return upload_out(upload)
    missing = f"No bytes were received for {file_key}; PUT them to its uploadUrl."
    staging_key = upload.staging_key
    if staging_key is None:  # the service's own URL completes on the PUT
        raise Problem(409, ErrorCode.UPLOAD_MISSING, missing)
    async with _reserved(session, file_key) as upload:
        # Copied first, checked second: the client may PUT to the staging key again at any moment, but
        # only the service writes the final key, so the bytes checked are the bytes kept.
        try:
            await storage.copy(staging_key, upload.object_key)
        except FileNotFoundError:
            raise _SlotStaysOpen(409, ErrorCode.UPLOAD_MISSING, missing) from None
        sha256 = await _checked(upload, storage.read(upload.object_key))
        done = await _finish(session, file_key, sha256)
    await storage.delete(staging_key)  # a later PUT may write it again; the sweep removes that
    return done


# Submissions --------------------------------------------------------------------------------------

async def attachments_of(session: AsyncSession, claim: Claim, attachments: list[Attachment]) -> list[dict[str, Any]]:
    """The attachments to record: each ``fileKey`` must name a completed upload of this claim, whose
    stored size and type replace what the body says; the uploads are kept from then on."""
    recorded = []
    errors = []
    for index, attachment in enumerate(attachments):
        item = attachment.model_dump(mode="json", exclude_none=True)
        if attachment.fileKey is not None:
            upload = await session.get(Upload, attachment.fileKey, populate_existing=True)
            usable = (upload is not None and upload.claim_id == claim.id and upload.expires_at > now()
                      and upload.status == UploadStatus.COMPLETED)
            if upload is None or not usable:
                errors.append({"field": f"attachments.{index}.fileKey",
                               "message": f"{attachment.fileKey} is not a completed upload of claim {claim.id}"})
                continue
            if not fits_artifact(attachment.type, upload.mime_type):
                errors.append({"field": f"attachments.{index}.type",
                               "message": f"a {upload.mime_type} file cannot be a {attachment.type} attachment"})
                continue
            upload.attached_at = now()
            item.update(fileName=attachment.fileName or upload.file_name, mimeType=upload.mime_type,
                        sizeBytes=upload.size_bytes, sha256=upload.sha256)
        recorded.append(item)
    if errors:
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise invalid(f"The attachments cannot be recorded: {summary}", errors, code=ErrorCode.INVALID_ATTACHMENT)
    return recorded


# Sweep --------------------------------------------------------------------------------------------

def _rejection_kept_past(current: datetime) -> ColumnElement[bool]:
    """Uploads of claims whose rejection has stood (appeal denied, window closed, task ended) longer than
    the retention. Accepted work is kept."""
    cutoff = current - timedelta(days=get_settings().rejected_file_retention_days)
    return Upload.claim_id.in_(select(Claim.id).where(Claim.status == ClaimStatus.REJECTED,
                                                      Claim.holds_slot.is_(False), Claim.ended_at <= cutoff))


async def _remove(session: AsyncSession, which: ColumnElement[bool]) -> int:
    """Remove the uploads ``which`` selects, with their bytes, a batch at a time."""
    removed = 0
    while True:
        batch = list((await session.execute(
            select(Upload).where(which).order_by(Upload.expires_at).limit(SWEEP_BATCH))).scalars())
        await session.commit()
        for upload in batch:
            # The row goes first, and only while it is still selected: bytes a submission took meanwhile
            # must never be lost (at worst an object outlives its row).
            gone = await session.execute(delete(Upload).where(Upload.id == upload.id, which))
            await session.commit()
            if gone.rowcount:  # type: ignore[attr-defined]
                await _delete_objects(upload)
                removed += 1
        if len(batch) < SWEEP_BATCH:
            return removed


async def _clear_staging(session: AsyncSession, current: datetime) -> None:
    """Remove what was PUT to the staging key of a completed upload, once its URL can no longer write there."""
    stale = list((await session.execute(select(Upload).where(
        Upload.status == UploadStatus.COMPLETED, Upload.staging_key.is_not(None), Upload.url_expires_at <= current,
    ).limit(SWEEP_BATCH))).scalars())
    await session.commit()
    for upload in stale:
        if upload.staging_key is not None:
            await storage.delete(upload.staging_key)
        await session.execute(update(Upload).where(Upload.id == upload.id).values(staging_key=None))
        await session.commit()


async def sweep_uploads() -> int:
    """Remove expired slots, completed uploads no submission names, and the files of rejected claims past
    their retention, with their bytes; and stray bytes at the staging keys of completed uploads."""
    current = now()
    async with get_database().sessionmaker() as session:
        removed = await _remove(session, Upload.attached_at.is_(None) & (Upload.expires_at <= current))
        removed += await _remove(session, _rejection_kept_past(current))
        await _clear_staging(session, current)
    return removed
