"""The checks' sandbox and verifier, with bubblewrap for real (``make system-deps`` installs it)."""

from __future__ import annotations

import pytest

from bountyboard.checks.sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """The sandbox every check uses. Missing bubblewrap fails these tests rather than skipping them:
    a skipped hostile test would pass for a sandbox that is not there."""
    box = Sandbox()
    missing = box.available()
    if missing:
        pytest.fail(f"{missing}: run `make system-deps`")
    return box
