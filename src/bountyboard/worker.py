"""Periodic background jobs: run inside ``bountyboard serve`` and alone by ``bountyboard worker``.

Each job is safe to run in several processes at once (rows are claimed with
``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite serialises writers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bountyboard.benchhub import service as benchhub_service
from bountyboard.config import get_settings
from bountyboard.events import scheduled as events_scheduled
from bountyboard.events.delivery.dispatcher import Dispatcher
from bountyboard.idempotency import IdempotencyRecord
from bountyboard.market import checking, scheduled
from bountyboard.market.files import service as files_service
from bountyboard.oauth.models import OAuthAuthorizationCode
from bountyboard.site.models import WebSession
from bountyboard.storage.retention import purge

log = logging.getLogger("bountyboard.worker")


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    interval_seconds: float
    run: Callable[[], Awaitable[object]]


def periodic_jobs(dispatcher: Dispatcher) -> list[PeriodicJob]:
    return [
        PeriodicJob("purge-idempotency-keys", 300.0, purge(IdempotencyRecord.expires_at)),
        PeriodicJob("deliver-webhooks", 0.0, dispatcher.deliver),  # paces itself
        PeriodicJob("purge-events", 3600.0, events_scheduled.purge_events),
        PeriodicJob("market-sweep", get_settings().sweep_interval_seconds, scheduled.sweep),
        PeriodicJob("purge-web-sessions", 3600.0, purge(WebSession.expires_at)),
        PeriodicJob("purge-oauth-codes", 3600.0, purge(OAuthAuthorizationCode.expires_at)),
        PeriodicJob("sweep-uploads", get_settings().sweep_interval_seconds, files_service.sweep_uploads),
        PeriodicJob("seed-benchmark-registry", 3600.0, benchhub_service.seed_registry),
        PeriodicJob("run-checks", get_settings().check_poll_seconds, checking.run_checks_once),
    ]


async def _loop(job: PeriodicJob, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await job.run()
        except Exception:  # a failing job is logged and retried on its next tick, never fatal
            log.exception("periodic job %s failed", job.name)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=job.interval_seconds)


async def run_background_jobs(stop: asyncio.Event, dispatcher: Dispatcher) -> None:
    """Every periodic job until ``stop`` is set; ``dispatcher`` delivers the webhooks."""
    # The dispatcher hears of deliveries queued by other processes, and keeps its HTTP client, meanwhile.
    async with dispatcher.running():
        await asyncio.gather(*(_loop(job, stop) for job in periodic_jobs(dispatcher)))
