"""The uploads table: one row per upload slot, from its creation until it is swept or kept by a submission."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.columns import StrEnumColumn
from bountyboard.storage.base import Base, UTCDateTime

Bytes = BigInteger().with_variant(Integer, "sqlite")


class UploadStatus(StrEnum):
    PENDING = "pending"  # the slot exists; its bytes have not been checked yet
    RECEIVING = "receiving"  # one request (a PUT or a completion) holds the slot while it moves and checks bytes
    COMPLETED = "completed"  # the bytes are stored and checked


# A slot is open until its bytes are checked: these count against the pending-slot limits.
OPEN_STATUSES = (UploadStatus.PENDING, UploadStatus.RECEIVING)


class Upload(Base):
    __tablename__ = "uploads"
    __table_args__ = (Index("ix_uploads_claim_status", "claim_id", "status"),
                      Index("ix_uploads_api_key_status", "api_key_id", "status"))

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # the fileKey
    claim_id: Mapped[str] = mapped_column(ForeignKey("claims.id"))
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    # The key that opened the slot (for the per-key limit on open slots).
    api_key_id: Mapped[str | None] = mapped_column(String(40))
    status: Mapped[UploadStatus] = mapped_column(StrEnumColumn(UploadStatus, 20))
    file_name: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(255))
    size_bytes: Mapped[int] = mapped_column(Bytes)
    # The sha256 the client declared (checked when given), then the one of the stored bytes.
    sha256: Mapped[str | None] = mapped_column(String(64))
    # Where the checked bytes live. No URL ever names this key: only the service writes it.
    object_key: Mapped[str] = mapped_column(String(200))
    # Where a presigned upload URL lets the client write (S3 only), until that URL has expired and the
    # sweep has removed whatever was written there; None on the local store, whose URL is the service's.
    staging_key: Mapped[str | None] = mapped_column(String(200))
    url_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Set when the claim's submission names the upload: from then on it is kept with the submission.
    attached_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # An open slot's upload URL ends here; a completed upload no submission names is swept here.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
