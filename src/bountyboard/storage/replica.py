"""Reads from a PostgreSQL streaming standby (``BOUNTYBOARD_DATABASE_READ_URL``), with read-your-writes.

A reading route's session (``session.ReadSession``) of a ``GET`` comes from the standby, unless its caller
wrote within the last ``read_your_writes_seconds``: a standby replays the primary's commits a little
later, and a caller must see what it just wrote. A caller is known by the credentials it presents (its
``Authorization`` header and each of its cookies, kept as digests): every commit of a request's unit of
work marks them, and a ``GET`` presenting any marked one reads from the primary until the window ends.
The key check and the cached task list always read from the primary, which their caches' stamps name.

The marks live in the process: a deployment of several processes routes each caller to one of them (or
lets a caller that must read its writes read them within the window from the process it wrote to).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable

from starlette.types import Scope

# Above this many marks, the expired ones are dropped at the next mark.
_PRUNE_ABOVE = 10_000
_SCOPE_CALLERS = "bountyboard.callers"


def callers(scope: Scope) -> tuple[bytes, ...]:
    """Digests of what identifies a request's caller: its Authorization header and each of its cookies."""
    found: tuple[bytes, ...] | None = scope.get(_SCOPE_CALLERS)
    if found is None:
        presented: list[bytes] = []
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                presented.append(value)
            elif name == b"cookie":
                presented.extend(part.strip() for part in value.split(b";") if part.strip())
        found = scope[_SCOPE_CALLERS] = tuple(hashlib.blake2b(credential, digest_size=16).digest()
                                              for credential in presented)
    return found


class RecentWriters:
    """The callers that committed a write within the last ``window`` seconds."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._until: dict[bytes, float] = {}

    def mark(self, presented: Iterable[bytes]) -> None:
        current = time.monotonic()
        if len(self._until) > _PRUNE_ABOVE:
            self._until = {caller: until for caller, until in self._until.items() if until > current}
        for caller in presented:
            self._until[caller] = current + self.window

    def wrote_recently(self, presented: Iterable[bytes]) -> bool:
        current = time.monotonic()
        return any(self._until.get(caller, 0.0) > current for caller in presented)
