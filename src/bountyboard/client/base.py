"""What :class:`~bountyboard.client.Client` and :class:`~bountyboard.client.AsyncClient` share.

Both hold one key's crash-safe :class:`~.state.StateFile` and the :class:`~.operations.Operations`
over it; each writes out the same public methods (as httpx's clients do), the one with blocking I/O,
the other awaited, and brings its own transport. ``tests/client/test_async_client.py`` holds the two
to the same methods, signatures and docstrings.
"""

from __future__ import annotations

from typing import Any

from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile


class BaseClient:
    """The state both clients keep, and the methods that read it without a request."""

    def __init__(self, state: StateFile, *, check_scopes: bool) -> None:
        self.state = state
        self._ops = Operations(state, check_scopes=check_scopes)

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return self._ops.persisted_claims()

    def forget_claim(self, claim_id: str) -> None:
        """Drop a claim (and its pending submission) from the state file; the service is not told."""
        self._ops.forget_claim(claim_id)
