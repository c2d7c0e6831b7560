"""The check-run queue (checks/jobs.py) on a migrated SQLite file: leases, a runner that dies mid-run,
exactly one recorded outcome, the attempt limit. (SQLite here does not enforce the foreign key to
submissions, so runs name made-up submissions; the live tier will queue runs from real submits.)"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from bountyboard import clock
from bountyboard.checks import jobs
from bountyboard.checks.models import CheckRun, RunStatus
from bountyboard.storage.migrations import upgrade_database

LEASE = 60.0


@pytest.fixture(scope="module")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('check-jobs') / 'db.sqlite'}"
    upgrade_database(url)  # migration 0018 among all heads
    return url


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_async_engine(database_url)
    maker = async_sessionmaker(engine, expire_on_commit=False)
    async with maker() as session, session.begin():
        await session.execute(CheckRun.__table__.delete())
    yield maker
    await engine.dispose()


async def queue(sessions: async_sessionmaker[AsyncSession], *submissions: str) -> None:
    async with sessions() as session, session.begin():
        for submission in submissions:
            await jobs.enqueue(session, submission)


async def take(sessions: async_sessionmaker[AsyncSession], limit: int = 10) -> list[jobs.Lease]:
    async with sessions() as session, session.begin():
        return await jobs.lease(session, lease_seconds=LEASE, limit=limit)


async def finish(sessions: async_sessionmaker[AsyncSession], held: jobs.Lease, status: RunStatus) -> bool:
    async with sessions() as session, session.begin():
        return await jobs.complete(session, held, jobs.Outcome(status, {"status": status.value}))


async def rows(sessions: async_sessionmaker[AsyncSession]) -> list[CheckRun]:
    async with sessions() as session:
        return list((await session.execute(select(CheckRun).order_by(CheckRun.id))).scalars())


async def test_a_leased_run_is_not_leased_again_while_its_lease_holds(
        sessions: async_sessionmaker[AsyncSession]) -> None:
    await queue(sessions, "sub_a", "sub_b")
    first = await take(sessions, limit=1)
    assert [(held.submission_id, held.attempt) for held in first] == [("sub_a", 1)]
    assert [held.submission_id for held in await take(sessions)] == ["sub_b"]
    assert await take(sessions) == []
    assert [row.status for row in await rows(sessions)] == [RunStatus.RUNNING, RunStatus.RUNNING]


async def test_a_runner_that_died_is_taken_over_and_one_outcome_is_recorded(
        sessions: async_sessionmaker[AsyncSession]) -> None:
    await queue(sessions, "sub_c")
    [dead] = await take(sessions)
    clock.advance(LEASE + 1)  # the first runner was killed; its lease runs out
    try:
        [alive] = await take(sessions)
    finally:
        clock.advance(-(LEASE + 1))
    assert (alive.attempt, alive.token != dead.token) == (2, True)
    assert await finish(sessions, dead, RunStatus.PASSED) is False  # a late outcome of the dead runner
    assert await finish(sessions, alive, RunStatus.FAILED) is True
    assert await finish(sessions, alive, RunStatus.PASSED) is False  # recorded once
    [row] = await rows(sessions)
    assert (row.status, row.result, row.attempts, row.lease_token) == (RunStatus.FAILED, {"status": "failed"}, 2,
                                                                        None)
    clock.advance(LEASE + 1)
    try:
        assert await take(sessions) == []  # a final run is never leased again
    finally:
        clock.advance(-(LEASE + 1))


async def test_a_run_interrupted_too_often_ends_as_an_error(sessions: async_sessionmaker[AsyncSession]) -> None:
    await queue(sessions, "sub_d")
    moved = 0.0
    try:
        for attempt in range(1, jobs.MAX_ATTEMPTS + 1):
            [held] = await take(sessions)
            assert held.attempt == attempt
            clock.advance(LEASE + 1)
            moved += LEASE + 1
        assert await take(sessions) == []
    finally:
        clock.advance(-moved)
    [row] = await rows(sessions)
    assert row.status is RunStatus.ERROR
    assert row.result == {"status": "error", "error": f"the check run was interrupted {jobs.MAX_ATTEMPTS} times"}


async def test_run_leased_runs_and_records_each_leased_run(sessions: async_sessionmaker[AsyncSession]) -> None:
    await queue(sessions, "sub_ok", "sub_bug")

    async def execute(held: jobs.Lease) -> jobs.Outcome:
        if held.submission_id == "sub_bug":
            raise RuntimeError("a bug in the checks")
        return jobs.Outcome(RunStatus.PASSED, {"status": "passed"}, {"version": 1})

    acted_on: list[tuple[str, RunStatus]] = []

    async def on_recorded(session: AsyncSession, held: jobs.Lease, outcome: jobs.Outcome) -> None:
        assert session.in_transaction()  # the outcome's effects commit with it
        acted_on.append((held.submission_id, outcome.status))

    async with sessions() as session, session.begin():
        leases = await jobs.lease(session, lease_seconds=LEASE, limit=8)
    assert len(leases) == 2
    assert all([await jobs.run_leased(sessions, execute, held, on_recorded) for held in leases])
    assert not await jobs.run_leased(sessions, execute, leases[0], on_recorded)  # recorded already: nothing
    assert sorted(acted_on) == [("sub_bug", RunStatus.ERROR), ("sub_ok", RunStatus.PASSED)]
    ok, bug = await rows(sessions)
    assert (ok.status, ok.receipt) == (RunStatus.PASSED, {"version": 1})
    assert (bug.status, bug.result) == (RunStatus.ERROR, {"status": "error", "error": "the check could not be run"})
