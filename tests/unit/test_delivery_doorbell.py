"""The doorbell of events/delivery/wakeup.py: rings are counted, so none is lost to a busy dispatcher.

A wait that should end at once is given a minute and must end within ten seconds: a lost ring fails
the test by a wide margin, and a slow machine does not."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

from bountyboard.events.doorbell import Doorbell

LONG = 60.0


def _ends(wait: Awaitable[None]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(wait, timeout=10.0)

    asyncio.run(bounded())


def test_a_ring_before_the_wait_is_not_lost() -> None:
    doorbell = Doorbell()
    since = doorbell.rings  # read before looking for due rows
    doorbell.ring()  # a commit while the dispatcher was busy
    _ends(doorbell.wait(LONG, since))


def test_a_ring_during_the_wait_ends_it() -> None:
    doorbell = Doorbell()

    async def wait_and_ring() -> None:
        asyncio.get_running_loop().call_later(0.05, doorbell.ring)
        await doorbell.wait(LONG, doorbell.rings)

    _ends(wait_and_ring())
    assert doorbell.rings == 1


def test_unrung_it_waits_the_whole_time() -> None:
    started = time.monotonic()
    asyncio.run(Doorbell().wait(0.2, 0))
    assert time.monotonic() - started >= 0.2


def test_news_from_the_watch_ends_the_wait() -> None:
    doorbell = Doorbell()
    asked = 0

    async def changed() -> bool:
        nonlocal asked
        asked += 1
        return asked == 3

    _ends(doorbell.wait(LONG, doorbell.rings, changed, every=0.01))
    assert asked == 3


def test_one_doorbell_serves_one_event_loop_after_another() -> None:
    doorbell = Doorbell()
    asyncio.run(doorbell.wait(0.01, 0))

    async def rung_later() -> None:
        asyncio.get_running_loop().call_later(0.05, doorbell.ring)
        await doorbell.wait(LONG, doorbell.rings)

    _ends(rung_later())
