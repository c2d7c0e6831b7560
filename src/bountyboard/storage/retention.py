"""Rows that keep themselves only until a time: the periodic jobs that forget them.

Idempotency records, browser sessions and OAuth authorization codes each carry an ``expires_at``; a
row past it is never read again (every reader checks the time), so deleting it is housekeeping. Each
purge is one unit of work of its own (a background job is its own edge, see ``unit_of_work``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from bountyboard.clock import now
from bountyboard.storage.engine import get_database


async def delete_expired(session: AsyncSession, expires_at: InstrumentedAttribute[datetime]) -> int:
    """Delete the rows of ``expires_at``'s table whose time has come; how many went."""
    result = await session.execute(delete(expires_at.class_).where(expires_at <= now()))
    return int(getattr(result, "rowcount", 0) or 0)


def purge(expires_at: InstrumentedAttribute[datetime]) -> Callable[[], Awaitable[int]]:
    """The periodic job that deletes the expired rows of ``expires_at``'s table."""

    async def run() -> int:
        async with get_database().sessionmaker() as session:
            removed = await delete_expired(session, expires_at)
            await session.commit()
            return removed

    return run
