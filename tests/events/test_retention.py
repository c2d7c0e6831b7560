"""Retention: events past the configured period go, with their queued deliveries and attempts."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from bountyboard.accounts.models import User
from bountyboard.clock import now
from bountyboard.config import Settings
from bountyboard.events import webhooks
from bountyboard.events.kinds import ClaimReviewedData, EventKind
from bountyboard.events.models import Event, WebhookDelivery, WebhookMessage
from bountyboard.events.service import Owner, emit, list_events, purge_expired_events
from bountyboard.ids import new_id
from bountyboard.storage.engine import Database
from bountyboard.storage.migrations import upgrade_database
from tests.support.server import backends, database_url


def _reviewed(n: int) -> ClaimReviewedData:
    return ClaimReviewedData(taskId=f"task_{n}", claimId=f"clm_{n}", submissionId=f"sub_{n}", decision="accepted",
                             reviewState="accepted", comment=None, score=None)


@pytest.mark.parametrize("backend", backends())
async def test_purge_keeps_the_retention_period(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        await asyncio.to_thread(upgrade_database, url)  # Alembic runs its own event loop
        database = Database(Settings(database_url=url, data_dir=tmp_path, webhook_allow_private=True))
        try:
            async with database.sessionmaker() as session:
                user = User(id=new_id("usr"), email="retention@example.com", display_name="r", role="operator")
                session.add(user)
                await session.commit()
                owner = Owner(user.id)
                hook = await webhooks.create_endpoint(session, owner, "https://93.184.216.34/x", ["claim.reviewed"])
                old = [await emit(session, EventKind.CLAIM_REVIEWED, _reviewed(n), operator_id=user.id)
                       for n in range(3)]
                recent = [await emit(session, EventKind.CLAIM_REVIEWED, _reviewed(n), operator_id=user.id)
                          for n in range(2)]
                await session.flush()
                message = (await session.execute(select(WebhookMessage).where(
                    WebhookMessage.event_sequence == old[0].sequence))).scalar_one()
                session.add(WebhookDelivery(id=new_id("dlv"), endpoint_id=hook.id, message_id=message.id,
                                            event_id=old[0].id, event_type=old[0].type, attempt=1, succeeded=False))
                await session.execute(update(Event).where(Event.sequence.in_([e.sequence for e in old]))
                                      .values(created_at=now() - timedelta(days=31)))
                await session.commit()

                assert await purge_expired_events(session, retention_days=30) == 3
                kept, _ = await list_events(session, owner)
                assert [e.id for e in kept] == [e.id for e in recent]
                assert await session.scalar(select(func.count()).select_from(WebhookMessage)) == 2
                assert await session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0
                assert await purge_expired_events(session, retention_days=30) == 0
        finally:
            await database.dispose()


@pytest.mark.parametrize("backend", backends())
async def test_a_purge_never_hands_a_position_out_again(backend: str, tmp_path: Path) -> None:
    """Every event purged, the newest too: the next one still comes after them all, so a poller's cursor
    taken before the purge does not skip it (on SQLite the counter moved by migration 0025's trigger)."""
    with database_url(backend, tmp_path) as url:
        await asyncio.to_thread(upgrade_database, url)
        database = Database(Settings(database_url=url, data_dir=tmp_path))
        try:
            async with database.sessionmaker() as session:
                written = [await emit(session, EventKind.CLAIM_REVIEWED, _reviewed(n), operator_id="usr_purged")
                           for n in range(3)]
                positions = [event.sequence for event in written]
                assert positions == sorted(set(positions))
                await session.execute(update(Event).values(created_at=now() - timedelta(days=31)))
                await session.commit()
                assert await purge_expired_events(session, retention_days=30) == 3

                after = await emit(session, EventKind.CLAIM_REVIEWED, _reviewed(3), operator_id="usr_purged")
                await session.commit()
                assert after.sequence > positions[-1]
                seen, _ = await list_events(session, Owner("usr_purged"), after=positions[-1])
                assert [event.id for event in seen] == [after.id]
        finally:
            await database.dispose()
