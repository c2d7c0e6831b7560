"""The unit of work (storage.unit_of_work): what it commits, what it rolls back, when its callbacks run,
and that a request session begins no transaction until it writes."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest
from sqlalchemy import select

from bountyboard.clock import now
from bountyboard.error_codes import ErrorCode
from bountyboard.errors import Problem
from bountyboard.idempotency import IdempotencyRecord
from bountyboard.storage.engine import get_database
from bountyboard.storage.unit_of_work import after_commit, insert_new, transaction, write_changes
from tests.support.api import Admin
from tests.support.in_process import recorded_statements


def _record(key: str) -> IdempotencyRecord:
    current = now()
    return IdempotencyRecord(scope_hash=key, fingerprint="f", locked_until=current, expires_at=current + timedelta(1))


async def _stored(key: str) -> bool:
    async with get_database().request_sessionmaker() as session:
        return await session.get(IdempotencyRecord, key) is not None


async def _unit(key: str, problem: Problem | None, rung: list[str]) -> None:
    session = get_database().request_sessionmaker()
    try:
        async with transaction(session):
            session.add(_record(key))
            await session.flush()
            after_commit(session, lambda: rung.append(key))
            if problem is not None:
                raise problem
    finally:
        await session.close()


@pytest.mark.usefixtures("app_admin")
@pytest.mark.parametrize(("keep", "stored"), [(None, True), (False, False), (True, True)])
def test_commits_the_work_or_what_a_refusal_keeps(keep: bool | None, stored: bool, app_admin: Admin) -> None:
    key = f"uow-{keep}"
    rung: list[str] = []
    problem = None if keep is None else Problem(409, ErrorCode.CONFLICT, "refused")
    if problem is not None and keep:
        problem = problem.keeping_writes()

    async def run() -> bool:
        with contextlib.suppress(Problem):
            await _unit(key, problem, rung)
        return await _stored(key)

    assert asyncio.run(run()) is stored
    assert rung == ([key] if stored else [])  # the callback runs after a commit, and only then


def test_a_request_session_reads_without_a_transaction_and_writes_in_one(app_admin: Admin) -> None:
    async def run() -> tuple[list[str], list[str]]:
        with recorded_statements() as reads:
            async with get_database().request_sessionmaker() as session:
                await session.execute(select(IdempotencyRecord.scope_hash).limit(1))
        with recorded_statements() as writes:
            await _unit("uow-begin", None, [])
        return reads, writes

    reads, writes = asyncio.run(run())
    assert not [s for s in reads if s.upper().startswith(("BEGIN", "COMMIT"))], reads
    assert writes[0] == "BEGIN IMMEDIATE" and writes[-1].startswith("INSERT"), writes


def test_a_get_reads_in_one_snapshot(app_admin: Admin) -> None:
    """A GET's statements, the key check's with the route's, follow one deferred BEGIN (one snapshot:
    tests/foundation/test_snapshot_reads.py); the GET commits nothing."""
    with recorded_statements() as statements:
        response = app_admin.http.get("/v1/agent/bots")
    assert response.status_code == 200, response.text
    assert statements[0] == "BEGIN" and len(statements) > 1, statements
    assert not [s for s in statements[1:] if s.upper().startswith(("BEGIN", "COMMIT"))], statements


@pytest.mark.usefixtures("app_admin")
def test_insert_new_writes_one_row_with_its_defaults_and_a_later_change_is_not_lost() -> None:
    record = IdempotencyRecord(scope_hash="uow-insert-new", fingerprint="f", locked_until=now(),
                               expires_at=now() + timedelta(1))

    async def run() -> tuple[list[str], IdempotencyRecord | None]:
        session = get_database().request_sessionmaker()
        try:
            with recorded_statements() as statements:
                async with transaction(session):
                    await insert_new(session, record)
                    assert record.created_at is not None and record.status_code is None  # a default, and NULL
                    record.status_code = 201  # changed after the INSERT: flushed as an UPDATE
        finally:
            await session.close()
        async with get_database().request_sessionmaker() as reader:
            return statements, await reader.get(IdempotencyRecord, record.scope_hash)

    statements, stored = asyncio.run(run())
    assert [s.split()[0] for s in statements if s.split()[0] in {"INSERT", "UPDATE"}] == ["INSERT", "UPDATE"]
    assert stored is not None and stored.status_code == 201 and stored.created_at == record.created_at


@pytest.mark.usefixtures("app_admin")
def test_write_changes_updates_only_what_changed_once_and_a_later_change_is_not_lost() -> None:
    key = "uow-write-changes"

    async def run() -> tuple[list[str], IdempotencyRecord | None, bool]:
        async with get_database().request_sessionmaker() as setup:
            setup.add(_record(key))
            await setup.commit()
        session = get_database().request_sessionmaker()
        try:
            with recorded_statements() as statements:
                async with transaction(session):
                    record = await session.get(IdempotencyRecord, key)
                    assert record is not None
                    record.status_code, record.fingerprint = 202, "g"
                    await write_changes(session, record)
                    clean = not session.dirty and record in session  # nothing left for the flush
                    await write_changes(session, record)  # nothing changed since: no statement
                    record.body = b"later"  # flushed at commit, as any change
        finally:
            await session.close()
        async with get_database().request_sessionmaker() as reader:
            return statements, await reader.get(IdempotencyRecord, key), clean

    statements, stored, clean = asyncio.run(run())
    updates = [s for s in statements if s.startswith("UPDATE")]
    assert clean and len(updates) == 2, statements
    assert "fingerprint" in updates[0] and "status_code" in updates[0] and "body" not in updates[0]
    assert "body" in updates[1] and "status_code" not in updates[1]
    assert stored is not None and (stored.status_code, stored.fingerprint, stored.body) == (202, "g", b"later")
