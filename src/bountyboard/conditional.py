"""Conditional GETs: an ``ETag`` on answers that pollers ask for again and again, ``304`` when it still holds.

An ETag here is weak (``W/"..."``): it names the state of what the answer shows (the rows' versions,
the list's total, the query), not its bytes, so it can be checked without building the answer.
Whoever computes one must feed it everything visible in the answer that can change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from fastapi import Request, Response
from pydantic import BaseModel

from bountyboard import __version__


def weak_etag(parts: Iterable[object]) -> str:
    """An ETag over ``parts`` (and the release, whose answers may be shaped differently)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(__version__.encode())
    for part in parts:
        digest.update(b"\x1f" + repr(part).encode())
    return f'W/"{digest.hexdigest()}"'


def still_fresh(header: str | None, etag: str) -> bool:
    """Whether the caller's ``If-None-Match`` header names ``etag`` (weak comparison, RFC 9110 section 13.1.2)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(candidate.strip().removeprefix("W/") == bare for candidate in header.split(","))


def _headers(etag: str) -> dict[str, str]:
    # Answers depend on the caller's key: never shared by a cache, always revalidated.
    return {"ETag": etag, "Cache-Control": "private, no-cache", "Vary": "Authorization"}


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers=_headers(etag))


def json_with_etag(content: bytes, etag: str) -> Response:
    """The answer, serialised once (FastAPI would validate and serialise a model again)."""
    return Response(content, media_type="application/json", headers=_headers(etag))


def conditional_json(request: Request, body: BaseModel) -> Response:
    """The answer with an ETag of its bytes, or 304 when the caller holds them already (for single
    resources, cheap to build: what is saved is the transfer and the caller's parsing)."""
    content = body.model_dump_json().encode()
    etag = f'"{hashlib.blake2b(content, digest_size=16).hexdigest()}"'
    if still_fresh(request.headers.get("if-none-match"), etag):
        return not_modified(etag)
    return json_with_etag(content, etag)
