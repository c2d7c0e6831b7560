"""The uploads table: one row per upload slot, from its creation until it is swept or kept by a submission."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.columns import StrEnumColumn
from bountyboard.db import Base, UTCDateTime

Bytes = BigInteger().with_variant(Integer, "sqlite")


class UploadStatus(StrEnum):
    PENDING = "pending"  # the slot exists; its bytes have not been checked yet
    COMPLETED = "completed"  # the bytes are stored and checked


class Upload(Base):
    __tablename__ = "uploads"
    __table_args__ = (Index("ix_uploads_claim_status", "claim_id", "status"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # the fileKey
    claim_id: Mapped[str] = mapped_column(ForeignKey("claims.id"))
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    status: Mapped[UploadStatus] = mapped_column(StrEnumColumn(UploadStatus, 20))
    file_name: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(255))
    size_bytes: Mapped[int] = mapped_column(Bytes)
    # The sha256 the client declared (checked when given), then the one of the stored bytes.
    sha256: Mapped[str | None] = mapped_column(String(64))
    object_key: Mapped[str] = mapped_column(String(200))
    # Set when the claim's submission names the upload: from then on it is kept with the submission.
    attached_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # A pending slot's upload URL ends here; a completed upload no submission names is swept here.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
