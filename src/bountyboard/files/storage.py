"""The one place that talks to the object store, through obstore (docs/decisions.md says why).

On the embedded default files live in ``<data_dir>/files``; with ``BOUNTYBOARD_STORAGE_URL=s3://bucket/prefix``
they live in S3 or an S3-compatible server (``BOUNTYBOARD_STORAGE_ENDPOINT_URL``), with credentials and
region from the usual ``AWS_*`` variables. The same calls serve both; only S3 can presign URLs, so on the
local store clients send their bytes to the service itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from functools import lru_cache
from typing import IO, Any

import obstore
from obstore.store import LocalStore, ObjectStore, S3Store, from_url

from bountyboard.config import get_settings


@lru_cache
def get_store() -> ObjectStore:
    settings = get_settings()
    if not settings.storage_url:
        return LocalStore((settings.data_dir / "files").resolve(), mkdir=True)
    options: dict[str, Any] = {}
    endpoint = settings.storage_endpoint_url
    if endpoint:
        options["endpoint"] = endpoint
        if endpoint.startswith("http://"):
            options["client_options"] = {"allow_http": True}
    return from_url(settings.storage_url, **options)


def presigns() -> bool:
    """Whether clients PUT straight into the store (S3) rather than through the service."""
    return isinstance(get_store(), S3Store)


async def presigned_put(key: str, ttl: timedelta) -> str:
    store = get_store()
    assert isinstance(store, S3Store)
    return await obstore.sign_async(store, "PUT", key, ttl)


async def put(key: str, data: IO[bytes]) -> None:
    await obstore.put_async(get_store(), key, data)


async def size_of(key: str) -> int | None:
    """The stored object's size, or None when there is none."""
    try:
        meta = await obstore.head_async(get_store(), key)
    except FileNotFoundError:
        return None
    return int(meta["size"])


async def read(key: str) -> AsyncIterator[bytes]:
    result = await obstore.get_async(get_store(), key)
    async for chunk in result.stream():
        yield bytes(chunk)


async def delete(key: str) -> None:
    """Remove an object; one that is already gone is fine."""
    with contextlib.suppress(FileNotFoundError):
        await obstore.delete_async(get_store(), key)
