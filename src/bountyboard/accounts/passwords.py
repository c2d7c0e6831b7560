"""Password hashing with Argon2id (argon2-cffi's recommended parameters).

Hashing costs tens of milliseconds of CPU and 64 MiB of memory by design, so the request paths use
the ``*_off_loop`` forms: they run in worker threads (argon2-cffi releases the GIL), a few at a
time, and the event loop keeps serving everything else meanwhile.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache

import anyio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()
MIN_PASSWORD_LENGTH = 10
# At most this many hashings at once per process: bounds the memory (64 MiB each) and leaves cores free.
_hashing = anyio.CapacityLimiter(4)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


@lru_cache(maxsize=1)
def _decoy_hash() -> str:
    return _hasher.hash("decoy password never matched")


def verify_password(password_hash: str | None, password: str) -> bool:
    """Verify a password; without a stored hash, spend the same time so timing tells nothing."""
    if not password_hash:
        with contextlib.suppress(VerificationError):
            _hasher.verify(_decoy_hash(), password)
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)


async def hash_password_off_loop(password: str) -> str:
    return await anyio.to_thread.run_sync(hash_password, password, limiter=_hashing)


async def verify_password_off_loop(password_hash: str | None, password: str) -> bool:
    return await anyio.to_thread.run_sync(verify_password, password_hash, password, limiter=_hashing)
