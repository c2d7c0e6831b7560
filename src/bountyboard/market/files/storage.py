"""The one place that talks to the object store, through obstore (docs/decisions.md says why).

On the embedded default files live in ``<data_dir>/files``; with ``BOUNTYBOARD_STORAGE_URL=s3://bucket/prefix``
they live in S3 or an S3-compatible server (``BOUNTYBOARD_STORAGE_ENDPOINT_URL``), with credentials and
region from the usual ``AWS_*`` variables. The same calls serve both; only S3 can presign URLs, so on the
local store clients send their bytes to the service itself.

Presigned PUTs are signed with botocore rather than obstore: obstore signs the host alone, and the
size cap needs ``Content-Length`` among the signed headers, so that S3 refuses any other body size.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
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


@lru_cache
def _s3_signer() -> Any:
    import botocore.session
    from botocore.config import Config

    endpoint = get_settings().storage_endpoint_url
    # An S3-compatible server is reached by path, as obstore reaches it; AWS as botocore prefers.
    config = Config(signature_version="s3v4", s3={"addressing_style": "path"} if endpoint else {})
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return botocore.session.get_session().create_client("s3", endpoint_url=endpoint, region_name=region,
                                                        config=config)


async def presigned_put(key: str, ttl: timedelta, size: int, content_type: str) -> str:
    """A URL that PUTs exactly ``size`` bytes of ``content_type`` to ``key`` until ``ttl`` has passed."""
    store = get_store()
    assert isinstance(store, S3Store)
    full_key = f"{store.prefix}/{key}" if store.prefix else key
    params = {"Bucket": store.config["bucket"], "Key": full_key, "ContentLength": size, "ContentType": content_type}
    # In a thread: the first call may look credentials up (instance metadata, SSO files).
    url: str = await asyncio.to_thread(_s3_signer().generate_presigned_url, "put_object", Params=params,
                                       ExpiresIn=int(ttl.total_seconds()))
    return url


async def put(key: str, data: IO[bytes]) -> None:
    await obstore.put_async(get_store(), key, data)


async def copy(source: str, destination: str) -> None:
    """Copy an object within the store (on S3, by the server: the bytes do not pass through the service)."""
    await obstore.copy_async(get_store(), source, destination)


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
