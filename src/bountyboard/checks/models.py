"""The check-run queue (one row per submission to check, leased by the process running it), and the
verifier archives publishers upload for their draft tasks."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from bountyboard.clock import now
from bountyboard.columns import StrEnumColumn
from bountyboard.storage.base import Base, JSONType, UTCDateTime


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


FINAL = frozenset({RunStatus.PASSED, RunStatus.FAILED, RunStatus.ERROR})


class CheckRun(Base):
    """Queued with its submission; a runner leases it (``lease_until``, ``lease_token``), runs the
    checks and records the outcome only while it still holds the lease, so a runner that died mid-run
    leaves a row another runner takes over, and exactly one outcome is ever recorded (the submission
    is unique). ``attempts`` counts leases: past the runner's limit the run ends ``error``."""

    __tablename__ = "check_runs"
    __table_args__ = (Index("ix_check_runs_due", "status", "lease_until"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), unique=True)
    status: Mapped[RunStatus] = mapped_column(StrEnumColumn(RunStatus, 12), default=RunStatus.QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_token: Mapped[str | None] = mapped_column(String(32))
    # The checks' answer (DESIGN.md section 13) and the verifier's receipt (docs/checks.md).
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    receipt: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class VerifierArchive(Base):
    """A ``.tar.gz`` of a verifier's ``tests/`` directory, uploaded for one draft task and named by the
    task's ``checks.verifier.archiveKey``. Kept in the database with its task: a few megabytes at most
    (setting ``verifier_archive_max_bytes``), read whole by every check run, and gone when the task is."""

    __tablename__ = "verifier_archives"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # the archiveKey
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
