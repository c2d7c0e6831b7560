"""Keys derived from the server secret, and encryption at rest of what the service must read back.

Each purpose (webhook signing secrets, kept answers of idempotent requests, ...) gets its own key,
derived from ``BOUNTYBOARD_SECRET_KEY`` with HKDF-SHA256, so that no two uses share a key and the
secret itself never keys anything directly. Values are encrypted with Fernet (AES-128-CBC with
HMAC-SHA256, authenticated, random IV).

Rotation of the server secret: with ``BOUNTYBOARD_PREVIOUS_SECRET_KEY`` set to the replaced secret,
values encrypted under either are read, and new ones are written under the current secret;
``bountyboard db reencrypt`` rewrites the stored ones, after which the previous secret can go
(docs/security.md, "Webhook secrets").
"""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from bountyboard.config import get_settings

__all__ = ["Encrypted", "InvalidToken", "decrypt", "derived_key", "encrypt", "reencrypt"]

# The purposes keys are derived for (changing one makes what was stored under it unreadable).
WEBHOOK_SECRET = "webhook-secret"
IDEMPOTENT_ANSWER = "idempotency-body"
IDEMPOTENCY_SCOPE = "idempotency-scope"
OAUTH_CLIENT_SECRET = "oauth-client-secret"
OAUTH_AUTHORIZATION_REQUEST = "oauth-authorization-request"


@lru_cache(maxsize=32)
def _derive(secret: str, purpose: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=b"bountyboard:" + purpose.encode()).derive(secret.encode())


def derived_key(purpose: str) -> bytes:
    """32 bytes for ``purpose`` (a MAC key, say), from the current server secret."""
    return _derive(get_settings().effective_secret_key, purpose)


@lru_cache(maxsize=16)
def _box(purpose: str, secrets: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(base64.urlsafe_b64encode(_derive(secret, purpose))) for secret in secrets])


def _current_box(purpose: str) -> MultiFernet:
    settings = get_settings()
    secrets = [settings.effective_secret_key]
    if settings.previous_secret_key:
        secrets.append(settings.previous_secret_key.get_secret_value())
    return _box(purpose, tuple(secrets))


def encrypt(purpose: str, data: bytes) -> bytes:
    """A token (URL-safe ASCII) under the current secret's key for ``purpose``."""
    return _current_box(purpose).encrypt(data)


def decrypt(purpose: str, token: bytes, *, ttl: int | None = None) -> bytes:
    """The data, if the token was made under the current or the previous secret (and, with ``ttl``, at most
    that many seconds ago); else InvalidToken."""
    return _current_box(purpose).decrypt(token, ttl=ttl)


def reencrypt(purpose: str, token: bytes) -> bytes:
    """The same data encrypted under the current secret (a token made under the previous one, moved)."""
    return _current_box(purpose).rotate(token)


class Encrypted(TypeDecorator[str]):
    """A text column stored encrypted under the key for ``purpose``; Python code sees the clear text."""

    impl = String
    cache_ok = True

    def __init__(self, purpose: str, length: int = 255, **kwargs: Any) -> None:
        super().__init__(length, **kwargs)
        self.purpose = purpose

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else encrypt(self.purpose, value.encode()).decode("ascii")

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        try:
            return decrypt(self.purpose, value.encode("ascii")).decode()
        except InvalidToken as exc:
            raise RuntimeError(
                f"A stored value ({self.purpose}) cannot be decrypted: BOUNTYBOARD_SECRET_KEY is not the secret it was "
                "written under. After changing it, set BOUNTYBOARD_PREVIOUS_SECRET_KEY to the old one and run "
                "`bountyboard db reencrypt`.") from exc
