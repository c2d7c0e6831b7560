"""Short-lived signed links: a URL that carries its own permission until it expires (like a presigned URL)."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta
from typing import Literal
from urllib.parse import urlencode

from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, Problem, not_found

Purpose = Literal["upload", "download"]
# What a signature is: the hex HMAC-SHA256 made by :func:`_signature`. Routes refuse anything else (422).
SIGNATURE_PATTERN = r"^[0-9a-f]{64}$"


def _signature(purpose: Purpose, file_key: str, expires: int) -> str:
    message = f"{purpose}:{file_key}:{expires}".encode()
    return hmac.new(get_settings().effective_secret_key.encode(), message, hashlib.sha256).hexdigest()


def signed_path(purpose: Purpose, path: str, file_key: str, ttl: timedelta) -> tuple[str, datetime]:
    """``path`` with ``expires`` and ``signature`` query parameters, and when it stops working."""
    expires_at = (now() + ttl).replace(microsecond=0)
    expires = int(expires_at.timestamp())
    query = urlencode({"expires": expires, "signature": _signature(purpose, file_key, expires)})
    return f"{path}?{query}", expires_at


def check(purpose: Purpose, file_key: str, expires: int, signature: str) -> None:
    """404 for a link this service did not sign (nothing to learn from it), 410 once it has expired."""
    if not hmac.compare_digest(_signature(purpose, file_key, expires).encode(), signature.encode()):
        raise not_found("file", file_key)
    if expires <= now().timestamp():
        raise Problem(410, ErrorCode.LINK_EXPIRED, f"This {purpose} link has expired; ask for a new one.")
