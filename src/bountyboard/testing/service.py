"""What the test-only routes do: move the clock, hold a request, emit events through the real path."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import clock
from bountyboard.errors import invalid
from bountyboard.events import service as events
from bountyboard.events.kinds import ALL_KINDS
from bountyboard.events.models import Event
from bountyboard.testing.schemas import ClockState, EventBurst


def advance_clock(seconds: float) -> ClockState:
    offset = clock.advance(seconds)
    return ClockState(offsetSeconds=offset, now=clock.rfc3339(clock.now()) or "")


async def hold(seconds: float) -> dict[str, float]:
    """A deliberately slow operation, so tests can race a request that is still in flight."""
    await asyncio.sleep(seconds)
    return {"heldSeconds": seconds}


async def emit_burst(session: AsyncSession, burst: EventBurst) -> list[Event]:
    """``burst.count`` events of one type recorded as ``emit()`` records them, each numbered ``n`` in its data."""
    if burst.type not in ALL_KINDS:
        raise invalid(f"Unknown event type {burst.type}.")
    emitted = [await events.record(session, burst.type, {**burst.data, "n": n}, bot_id=burst.botId,
                                 operator_id=burst.operatorId, publisher_id=burst.publisherId)
               for n in range(burst.count)]
    await session.flush()
    return emitted
