"""One attempt: vet the destination, sign the body (Standard Webhooks), POST it, read the answer.

Only a 2xx counts as delivered; redirects are not followed. The destination is vetted again at each
attempt and the connection pinned to the vetted addresses (``events.transport``), so a name
re-pointed at a private address since the subscription was made is refused, not reached.
"""

from __future__ import annotations

import asyncio
import ssl
import time

import certifi
import httpx

from bountyboard import __version__
from bountyboard.config import Settings
from bountyboard.events import signing
from bountyboard.events.delivery.policy import parse_retry_after
from bountyboard.events.delivery.queue import Job, Outcome
from bountyboard.events.destinations import DestinationRefused, PrivateDestination, vet
from bountyboard.events.transport import pinned, webhook_client

EXCERPT_CHARS = 1000
_READ_LIMIT_BYTES = 4096


def new_client(settings: Settings) -> httpx.AsyncClient:
    """The dispatcher's HTTP client (connections to a destination are reused from one attempt to the
    next). Loading the CA bundle is the slow part: a dispatcher makes one client while it runs."""
    tls = ssl.create_default_context(cafile=certifi.where())
    return webhook_client(tls, settings.webhook_timeout_seconds, settings.webhook_concurrency * 2,
                          {"user-agent": f"bountyboard-webhooks/{__version__}"})


class Sender:
    """Sends jobs through one HTTP client, within the attempt timeout of the settings."""

    def __init__(self, client: httpx.AsyncClient, settings: Settings) -> None:
        self.client = client
        self.timeout_seconds = settings.webhook_timeout_seconds
        self.allow_private = settings.webhook_allow_private

    async def send(self, job: Job) -> Outcome:
        """The attempt's outcome; a failure of any kind is an outcome, never an exception."""
        outcome = Outcome(job)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_seconds):
                destination = await vet(job.url, allow_private=self.allow_private)
                headers = signing.headers(job.event_id, job.body, job.secrets)
                with pinned(destination):
                    async with self.client.stream("POST", job.url, content=job.body.encode(),
                                                  headers=headers) as answer:
                        await _read_answer(answer, outcome)
        except DestinationRefused as exc:
            outcome.error, outcome.refused = str(exc), isinstance(exc, PrivateDestination)
        except TimeoutError:
            outcome.error = f"No answer within {self.timeout_seconds:g} s."
        except httpx.HTTPError as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"[:500] if str(exc) else type(exc).__name__
        outcome.latency_ms = round((time.perf_counter() - started) * 1000)
        if outcome.status_code is not None and not outcome.succeeded and outcome.error is None:
            outcome.error = (f"Redirect ({outcome.status_code}) not followed: a 2xx is required."
                             if 300 <= outcome.status_code < 400 else f"The endpoint answered {outcome.status_code}.")
        return outcome


async def _read_answer(response: httpx.Response, outcome: Outcome) -> None:
    outcome.status_code = response.status_code
    outcome.retry_after = parse_retry_after(response.headers.get("retry-after"))
    received = b""
    async for chunk in response.aiter_bytes():
        received += chunk
        if len(received) >= _READ_LIMIT_BYTES:
            break
    outcome.excerpt = received.decode("utf-8", "replace")[:EXCERPT_CHARS] or None
