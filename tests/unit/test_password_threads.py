"""Argon2 hashing and verification run in worker threads, never on the event loop (the burst that
shows why is timed by perf/login_burst.py; tests/security/test_password_hashing.py runs it live)."""

from __future__ import annotations

import threading

import pytest

from bountyboard.accounts import passwords


async def test_hashing_runs_in_a_worker_thread() -> None:
    """The off-loop forms hash and verify in another thread than the event loop's."""
    loop_thread = threading.get_ident()
    seen: list[int] = []
    original = passwords.verify_password

    def spy(password_hash: str, password: str) -> bool:
        seen.append(threading.get_ident())
        return original(password_hash, password)

    digest = await passwords.hash_password_off_loop("correct horse battery")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "verify_password", spy)
        assert await passwords.verify_password_off_loop(digest, "correct horse battery")
    assert seen and loop_thread not in seen
