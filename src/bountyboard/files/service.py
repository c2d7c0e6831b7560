"""Uploads from slot to submission: who may upload, what the bytes must be, and what is kept.

An upload slot belongs to one active claim and is used by its holder. Its bytes are checked (size,
sha256 when declared, the real type against the declared one) before the upload counts as
completed; bytes that fail are removed with their slot, so a refusal leaves nothing behind. A
submission's attachment names a completed upload of its own claim, and takes its size and type from
it. Uploads no submission names are swept when they expire.

The database lock is never held while bytes move: a flow checks, ends its transaction, moves the
bytes, then locks again and checks once more before it records anything.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import IO, Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor
from bountyboard.clock import now, rfc3339
from bountyboard.config import get_settings
from bountyboard.db import get_database
from bountyboard.errors import ErrorCode, Problem, invalid, not_found
from bountyboard.files import links, storage
from bountyboard.files.content_types import Sniffer, fits_artifact, normalise
from bountyboard.files.models import Upload, UploadStatus
from bountyboard.files.schemas import UploadOut, UploadRequest, UploadSlot
from bountyboard.ids import new_id
from bountyboard.market.locks import locked_claim
from bountyboard.market.models import Claim
from bountyboard.market.permissions import held_claim
from bountyboard.market.schemas import Attachment
from bountyboard.market.slots import check_claim_now
from bountyboard.market.transitions import ClaimMove

SWEEP_BATCH = 100
_SPOOL_IN_MEMORY = 1024**2


def upload_out(upload: Upload) -> UploadOut:
    return UploadOut(fileKey=upload.id, claimId=upload.claim_id, status=upload.status, fileName=upload.file_name,
                     mimeType=upload.mime_type, sizeBytes=upload.size_bytes, sha256=upload.sha256,
                     expiresAt=None if upload.attached_at else rfc3339(upload.expires_at))


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
    ttl = timedelta(seconds=settings.upload_url_ttl_seconds)
    upload = Upload(
        id=new_id("upl"), claim_id=claim.id, task_id=claim.task_id, status=UploadStatus.PENDING,
        file_name=body.fileName, mime_type=normalise(body.mimeType), size_bytes=body.sizeBytes,
        sha256=body.sha256.lower() if body.sha256 else None, created_at=now(), expires_at=now() + ttl,
    )
    upload.object_key = f"claims/{claim.id}/{upload.id}"
    session.add(upload)
    await session.commit()
    base = settings.effective_base_url
    if storage.presigns():
        upload_url = await storage.presigned_put(upload.object_key, ttl)
    else:
        path, _ = links.signed_path("upload", f"/v1/uploads/{upload.id}", upload.id, ttl)
        upload_url = base + path
    return UploadSlot(fileKey=upload.id, uploadUrl=upload_url, method="PUT",
                      headers={"Content-Type": upload.mime_type}, expiresAt=rfc3339(upload.expires_at) or "",
                      maxBytes=upload.size_bytes,
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


async def _discard(session: AsyncSession, upload: Upload) -> None:
    """Remove a refused upload: its bytes and its slot."""
    await storage.delete(upload.object_key)
    await session.execute(delete(Upload).where(Upload.id == upload.id))
    await session.commit()


async def _pending_upload(session: AsyncSession, file_key: str) -> Upload:
    """A pending upload, its task and claim locked; a claim that can no longer be submitted drops it."""
    claim_id = await session.scalar(select(Upload.claim_id).where(Upload.id == file_key))
    if claim_id is None:
        raise not_found("upload", file_key)
    task, claim = await locked_claim(session, claim_id)
    upload = await session.get(Upload, file_key, populate_existing=True)
    if upload is None:
        raise not_found("upload", file_key)
    if upload.status != UploadStatus.PENDING:
        raise Problem(409, ErrorCode.UPLOAD_COMPLETED, f"Upload {file_key} is already completed; ask for a new slot.")
    try:
        await check_claim_now(session, task, claim, ClaimMove.SUBMIT)
    except Problem:
        await _discard(session, upload)
        raise
    return upload


async def _finish(session: AsyncSession, file_key: str, sha256: str) -> Upload:
    """Record checked bytes as a completed upload, if the claim still takes them (else drop them)."""
    upload = await _pending_upload(session, file_key)
    upload.status = UploadStatus.COMPLETED
    upload.sha256 = sha256
    upload.completed_at = now()
    upload.expires_at = now() + timedelta(seconds=get_settings().upload_unused_ttl_seconds)
    await session.commit()
    return upload


async def receive(session: AsyncSession, file_key: str, expires: int, signature: str,
                  body: AsyncIterator[bytes]) -> UploadOut:
    """The service's own upload URL: check the bytes as they stream in, then store them."""
    links.check("upload", file_key, expires, signature)
    upload = await _pending_upload(session, file_key)
    await session.commit()  # no lock while the bytes arrive
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        try:
            sha256 = await _checked(upload, body, spool)
        except Exception:  # refused, over the body limit, or the client went away: the slot is spent
            await _discard(session, upload)
            raise
        spool.seek(0)
        await storage.put(upload.object_key, spool)
    try:
        return upload_out(await _finish(session, file_key, sha256))
    except Problem:
        await storage.delete(upload.object_key)
        raise


async def complete(session: AsyncSession, actor: Actor, claim_id: str, file_key: str) -> UploadOut:
    """After a PUT to a presigned URL: check the stored bytes. A completed upload is returned as it is."""
    _task, claim = await held_claim(session, actor, claim_id)
    upload = await session.get(Upload, file_key, populate_existing=True)
    if upload is None or upload.claim_id != claim.id:
        raise not_found("upload", file_key)
    if upload.status == UploadStatus.COMPLETED:
        return upload_out(upload)
    upload = await _pending_upload(session, file_key)
    await session.commit()  # no lock while the bytes are read back
    if await storage.size_of(upload.object_key) is None:
        raise Problem(409, ErrorCode.UPLOAD_MISSING,
                      f"No bytes were received for {file_key}; PUT them to its uploadUrl.")
    try:
        sha256 = await _checked(upload, storage.read(upload.object_key))
    except Problem:
        await _discard(session, upload)
        raise
    return upload_out(await _finish(session, file_key, sha256))


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

async def sweep_uploads() -> int:
    """Remove expired slots and completed uploads no submission names, with their bytes."""
    removed = 0
    async with get_database().sessionmaker() as session:
        while True:
            expired = list((await session.execute(
                select(Upload).where(Upload.attached_at.is_(None), Upload.expires_at <= now())
                .order_by(Upload.expires_at).limit(SWEEP_BATCH)
            )).scalars())
            await session.commit()
            for upload in expired:
                # The row goes first: bytes a submission took meanwhile must never be lost (at worst
                # an object outlives its row).
                gone = await session.execute(delete(Upload).where(Upload.id == upload.id,
                                                                  Upload.attached_at.is_(None)))
                await session.commit()
                if gone.rowcount:  # type: ignore[attr-defined]
                    await storage.delete(upload.object_key)
                    removed += 1
            if len(expired) < SWEEP_BATCH:
                return removed
