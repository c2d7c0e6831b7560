"""The feed under concurrent writers: a poller reading all the while sees every event exactly once, in an
order consistent with commits, though some transactions commit late; and no writer waits on another
(no row shared by every event-writing transaction: ``pg_stat_activity`` shows no lock wait but the
moment's wait for a new page of the events table)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bountyboard.config import Settings
from bountyboard.events.models import Event
from bountyboard.events.service import IN_TRANSACTION, Owner, list_events, record
from bountyboard.storage.engine import Database
from bountyboard.storage.migrations import upgrade_database
from tests.support.db import PAGE_ALLOCATION_WAIT
from tests.support.server import backends, database_url

WRITERS = 16
TRANSACTIONS = 6  # per writer
OPERATOR = "usr_horizon"
# Waits for a lock, of the backends connected to this test's database other than the sampler's own; a page
# added to the events table's file is no shared row.
_LOCK_WAITS = text("SELECT wait_event, left(query, 60) FROM pg_stat_activity WHERE datname = current_database() "
                   "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND wait_event <> :page_allocation"
                   ).bindparams(page_allocation=PAGE_ALLOCATION_WAIT)


@dataclass
class Transaction:
    began: float  # before its first statement
    committed: float  # once its commit returned
    events: list[str]


async def _writer(database: Database, writer: int, late: float, log: list[Transaction]) -> None:
    for number in range(TRANSACTIONS):
        async with database.sessionmaker() as session:
            began = time.monotonic()
            events = [await record(session, "claim.reviewed", {"writer": writer, "transaction": number, "n": n},
                                   operator_id=OPERATOR) for n in range(1 + (writer + number) % 3)]
            if (writer + number) % 3 == 0:
                await asyncio.sleep(late)  # commits late: others that began after it commit first
            await session.commit()
            log.append(Transaction(began, time.monotonic(), [event.id for event in events]))


async def _poll(database: Database, expected: int, writing: asyncio.Future[list[None]]) -> list[Event]:
    """Page through the feed, 7 at a time, until the writers are done and every event was seen (or 60 s)."""
    seen: list[Event] = []
    cursor = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        finished = writing.done()
        async with database.request_sessionmaker() as session:
            page, _ = await list_events(session, Owner(OPERATOR), after=cursor, limit=7)
        seen.extend(page)
        cursor = page[-1].sequence if page else cursor
        if finished and not page and len(seen) >= expected:
            return seen
        await asyncio.sleep(0.005)
    return seen


@contextlib.asynccontextmanager
async def _sampled(database: Database, waits: list[tuple[str, str]]) -> AsyncIterator[None]:
    """Sample ``pg_stat_activity`` every 5 ms while the block runs, keeping every lock wait seen."""
    stop = asyncio.Event()

    async def sample() -> None:
        async with database.engine.connect() as connection:
            while not stop.is_set():
                waits.extend((str(event), str(query)) for event, query in await connection.execute(_LOCK_WAITS))
                await connection.rollback()
                await asyncio.sleep(0.005)

    sampler = asyncio.create_task(sample())
    try:
        yield
    finally:
        stop.set()
        await sampler


async def _shared_row_burst(database: Database) -> None:
    """What the sampler must catch: transactions taking one shared row, each holding it a while."""
    async def take() -> None:
        async with database.sessionmaker() as session:
            await session.execute(text("UPDATE event_counter SET value = value WHERE id = 1"))
            await asyncio.sleep(0.05)
            await session.commit()

    await asyncio.gather(*(take() for _ in range(4)))


@pytest.mark.parametrize("backend", backends())
async def test_every_event_once_in_commit_order_with_late_commits(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        await asyncio.to_thread(upgrade_database, url)  # Alembic runs its own event loop
        database = Database(Settings(database_url=url, data_dir=tmp_path))
        try:
            log: list[Transaction] = []
            waits: list[tuple[str, str]] = []
            # SQLite's single writer runs the transactions one after the other: a shorter late commit.
            late = 0.2 if backend == "postgresql" else 0.02
            expected = sum(1 + (writer + number) % 3 for writer in range(WRITERS) for number in range(TRANSACTIONS))
            sampling = _sampled(database, waits) if backend == "postgresql" else contextlib.nullcontext()
            async with sampling:
                writing = asyncio.ensure_future(asyncio.gather(
                    *(_writer(database, writer, late, log) for writer in range(WRITERS))))
                seen = await _poll(database, expected, writing)
                await writing
            if backend == "postgresql":
                assert waits == [], f"event writers waited on a lock: {waits[:5]}"
                async with _sampled(database, waits):
                    await _shared_row_burst(database)
                assert any(event == "transactionid" for event, _ in waits), "the sampler misses a shared row"
        finally:
            await database.dispose()

    ids = [event.id for event in seen]
    written = [event for transaction in log for event in transaction.events]
    assert len(ids) == len(set(ids)) == len(written) == expected  # every event, none twice
    assert set(ids) == set(written)
    positions = [event.sequence for event in seen]
    assert positions == sorted(positions)
    rank = {event: index for index, event in enumerate(ids)}
    for transaction in log:
        ranks = [rank[event] for event in transaction.events]
        assert ranks == sorted(ranks)  # a transaction's events in the order it wrote them
    # A transaction that began after another committed comes after it in the feed.
    late_first = 0
    for first in log:
        for second in log:
            if first.committed < second.began:
                assert rank[first.events[-1]] < rank[second.events[0]]
            if rank[first.events[0]] < rank[second.events[0]] and first.committed > second.committed:
                late_first += 1
    if backend == "postgresql":
        # Some transactions committed after others that follow them in the feed: the late commits the
        # horizon waited for (SQLite's single writer commits in feed order).
        assert late_first > 0


@pytest.mark.skipif("postgresql" not in backends(), reason="PostgreSQL is not available")
async def test_only_this_databases_open_transactions_hold_the_feed_back(tmp_path: Path) -> None:
    """An open transaction of another database of the cluster cannot write here: the feed does not wait for
    it. One of this database, begun before the event's, may still write one: the feed waits for it."""
    with database_url("postgresql", tmp_path / "a") as url, database_url("postgresql", tmp_path / "b") as elsewhere:
        await asyncio.to_thread(upgrade_database, url)
        database = Database(Settings(database_url=url, data_dir=tmp_path))
        other = Database(Settings(database_url=elsewhere, data_dir=tmp_path))

        async def visible(event: Event) -> bool:
            async with database.request_sessionmaker() as session:
                page, _ = await list_events(session, Owner(OPERATOR), after=event.sequence - 1)
            return [e.id for e in page] == [event.id]

        async def written() -> Event:
            async with database.sessionmaker() as session:
                event = await record(session, "claim.reviewed", {}, operator_id=OPERATOR)
                await session.commit()
            return event

        try:
            for holder in (other, database):
                async with holder.sessionmaker() as open_transaction:
                    await open_transaction.execute(text("SELECT pg_current_xact_id()"))  # an id, older than the event's
                    event = await written()
                    assert await visible(event) is (holder is other)
                    await open_transaction.rollback()
                assert await visible(event)
        finally:
            await database.dispose()
            await other.dispose()


@pytest.mark.skipif("postgresql" not in backends(), reason="PostgreSQL is not available")
async def test_a_transaction_past_its_range_of_positions_fails(tmp_path: Path) -> None:
    """The 2**20 positions of a transaction used up (its last one taken), the next event's insert fails
    rather than taking a position of the next transaction's range."""
    with database_url("postgresql", tmp_path) as url:
        await asyncio.to_thread(upgrade_database, url)
        database = Database(Settings(database_url=url, data_dir=tmp_path))
        try:
            async with database.sessionmaker() as session:
                first = await record(session, "claim.reviewed", {}, operator_id=OPERATOR)
                assert first.sequence % IN_TRANSACTION == 0
                await session.execute(text(
                    "INSERT INTO events (sequence, id, type, created_at, data) "
                    "VALUES (:last, 'evt_last', 'claim.reviewed', now(), '{}')"),
                    {"last": first.sequence + IN_TRANSACTION - 1})
                with pytest.raises(IntegrityError):
                    await record(session, "claim.reviewed", {}, operator_id=OPERATOR)
        finally:
            await database.dispose()
