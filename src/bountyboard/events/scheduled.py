"""The events domain's periodic job: events past their retention period go, with their deliveries."""

from __future__ import annotations

from bountyboard.config import get_settings
from bountyboard.events.service import purge_expired_events
from bountyboard.storage.engine import get_database


async def purge_events() -> int:
    async with get_database().sessionmaker() as session:
        return await purge_expired_events(session, get_settings().event_retention_days)
