"""The check-run queue, leased as webhook deliveries are (events/dispatcher.py).

* :func:`enqueue` adds a run in the caller's transaction (the submit that queues it commits it).
* :func:`lease` takes due runs (queued, or running under a lease that ran out: its runner died) with
  ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's ``BEGIN IMMEDIATE`` serialises the same short
  transaction), marks them running under a fresh token and a deadline; the caller commits before
  running anything.
* :func:`complete` records the outcome only while the token still holds the row, so a runner whose
  lease ran out and was taken over records nothing: one outcome per run, whatever crashed when.
* A run leased ``max_attempts`` times without an outcome ends ``error`` (its checks keep killing
  the runner, or the runner keeps dying) instead of being retried forever.

:func:`run_leased` runs one leased check and records it; ``market.checking`` keeps up to its
  concurrency setting in flight, leasing as slots free.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bountyboard.checks.models import CheckRun, RunStatus
from bountyboard.clock import now

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Lease:
    run_id: int
    submission_id: str
    token: str
    attempt: int


@dataclass(frozen=True)
class Outcome:
    status: RunStatus  # passed, failed or error
    result: dict[str, Any]
    receipt: dict[str, Any] | None = None


async def enqueue(session: AsyncSession, submission_id: str) -> CheckRun:
    run = CheckRun(submission_id=submission_id, status=RunStatus.QUEUED, attempts=0, created_at=now())
    session.add(run)
    await session.flush()
    return run


def _due() -> Any:
    current = now()
    return (select(CheckRun.id)
            .where(CheckRun.status.in_([RunStatus.QUEUED, RunStatus.RUNNING]),
                   CheckRun.lease_until.is_(None) | (CheckRun.lease_until < current)))


async def lease(session: AsyncSession, *, lease_seconds: float, limit: int,
                max_attempts: int = MAX_ATTEMPTS) -> list[Lease]:
    """Lease up to ``limit`` due runs in the session's transaction (the caller commits)."""
    current = now()
    due = _due().order_by(CheckRun.id).limit(limit).with_for_update(of=CheckRun, skip_locked=True)
    ids = list((await session.execute(due)).scalars())
    if not ids:
        return []
    spent = list((await session.execute(
        update(CheckRun).where(CheckRun.id.in_(ids), CheckRun.attempts >= max_attempts)
        .values(status=RunStatus.ERROR, lease_until=None, lease_token=None, finished_at=current,
                result={"status": "error", "error": f"the check run was interrupted {max_attempts} times"})
        .returning(CheckRun.id).execution_options(synchronize_session=False))).scalars())
    if spent:
        log.warning("check runs %s ended as errors after %d interrupted attempts", spent, max_attempts)
    token = secrets.token_hex(16)
    rows = (await session.execute(
        update(CheckRun).where(CheckRun.id.in_(set(ids) - set(spent)))
        .values(status=RunStatus.RUNNING, lease_until=current + timedelta(seconds=lease_seconds),
                lease_token=token, attempts=CheckRun.attempts + 1, started_at=current)
        .returning(CheckRun.id, CheckRun.submission_id, CheckRun.attempts)
        .execution_options(synchronize_session=False))).all()
    return sorted((Lease(row.id, row.submission_id, token, row.attempts) for row in rows),
                  key=lambda held: held.run_id)


async def complete(session: AsyncSession, held: Lease, outcome: Outcome) -> bool:
    """Record the outcome if ``held`` still holds its run (the caller commits); False when it was
    taken over after its lease ran out, and then nothing is written."""
    written = (await session.execute(
        update(CheckRun)
        .where(CheckRun.id == held.run_id, CheckRun.lease_token == held.token,
               CheckRun.status == RunStatus.RUNNING)
        .values(status=outcome.status, result=outcome.result, receipt=outcome.receipt, finished_at=now(),
                lease_until=None, lease_token=None)
        .returning(CheckRun.id).execution_options(synchronize_session=False))).scalar_one_or_none()
    if not written:
        log.warning("check run %s was taken over after its lease ran out; its outcome is dropped", held.run_id)
    return written is not None


Recorded = Callable[[AsyncSession, Lease, Outcome], Awaitable[None]]


async def run_leased(sessionmaker: async_sessionmaker[Any], execute: Callable[[Lease], Awaitable[Outcome]],
                     held: Lease, on_recorded: Recorded | None = None) -> bool:
    """Run one leased check and record its outcome (False when the lease was taken over meanwhile)."""
    try:
        outcome = await execute(held)
    except Exception:  # a bug of the checks, not of the submission: an error result, logged
        log.exception("check run %s failed", held.run_id)
        outcome = Outcome(RunStatus.ERROR, {"status": "error", "error": "the check could not be run"})
    async with sessionmaker() as session, session.begin():
        written = await complete(session, held, outcome)
        if written and on_recorded is not None:
            await on_recorded(session, held, outcome)
        return written
