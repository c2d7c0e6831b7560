"""``Idempotency-Key`` for every POST (DESIGN.md section 4), as an ASGI middleware.

The scope of a key is (credential, method, path, key), the credential being the API key the
``Authorization`` header resolves to (its id, however the header spells it) or, without one, the
caller's address. The first request with a key runs and its response is kept for 24 hours; a retry
with the same body gets that response again with ``Idempotent-Replayed: true``; a retry while the
first is still running gets 409 ``idempotency_key_in_use``; a retry with another body gets 422
``idempotency_key_mismatch``. Responses that did not reach the operation (401, 403, 429) and server
errors are not kept, so the caller may retry them with the same key.

Kept responses may carry secrets shown once (a new API key, a webhook secret), so the database
never holds them in clear: bodies are encrypted (bountyboard.crypto) under a key derived from the
server secret, and the scope is an HMAC of the credential, never the credential itself. Only the
caller that made the first request, still holding a valid key, can get the replay.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta

from sqlalchemy import Integer, LargeBinary, String, delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bountyboard import crypto
from bountyboard.clock import now
from bountyboard.errors import ErrorCode, Problem, send_problem
from bountyboard.storage.base import Base, JSONType, UTCDateTime
from bountyboard.storage.engine import get_database

HEADER = b"idempotency-key"
REPLAYED_HEADER = b"idempotent-replayed"
RETENTION = timedelta(hours=24)
# A request that has run this long without finishing is taken to have died with its process.
IN_FLIGHT_LEASE = timedelta(seconds=60)
MAX_KEY_LENGTH = 255
_NOT_KEPT = {401, 403, 429}
_UNREPLAYED_HEADERS = {b"x-request-id", b"date", b"server"}


class IdempotencyRecord(Base):
    __tablename__ = "idempotency_records"

    scope_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer)
    headers: Mapped[list[list[str]] | None] = mapped_column(JSONType)
    body: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    locked_until: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


def _mac(*parts: bytes) -> str:
    digest = hmac.new(crypto.derived_key(crypto.IDEMPOTENCY_SCOPE), digestmod=hashlib.sha256)
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


async def _claim(scope_hash: str, fingerprint: str) -> tuple[str, IdempotencyRecord | None]:
    """Reserve the key. Returns ("proceed", None), ("replay", record), ("in_use"|"mismatch", None)."""
    sessionmaker = get_database().sessionmaker
    for _ in range(3):
        current = now()
        async with sessionmaker() as session:
            try:
                session.add(IdempotencyRecord(
                    scope_hash=scope_hash, fingerprint=fingerprint, locked_until=current + IN_FLIGHT_LEASE,
                    expires_at=current + RETENTION, created_at=current,
                ))
                await session.commit()
                return "proceed", None
            except IntegrityError:
                await session.rollback()
            record = await session.get(IdempotencyRecord, scope_hash, with_for_update=True)
            if record is None:
                continue
            if record.expires_at <= current:
                await session.delete(record)
                await session.commit()
                continue
            if record.fingerprint != fingerprint:
                return "mismatch", None
            if record.status_code is not None:
                return "replay", record
            if record.locked_until > current:
                return "in_use", None
            record.locked_until = current + IN_FLIGHT_LEASE
            await session.commit()
            return "proceed", None
    return "in_use", None


async def _finish(scope_hash: str, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    async with get_database().sessionmaker() as session:
        if status >= 500 or status in _NOT_KEPT:
            await session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.scope_hash == scope_hash))
        else:
            kept = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers
                    if k.lower() not in _UNREPLAYED_HEADERS]
            await session.execute(
                update(IdempotencyRecord).where(IdempotencyRecord.scope_hash == scope_hash)
                .values(status_code=status, headers=kept, body=crypto.encrypt(crypto.IDEMPOTENT_ANSWER, body))
            )
        await session.commit()


async def _credential(scope: Scope, authorization: bytes | None) -> tuple[bytes, Problem | None]:
    """Whose request this is, for the key's scope: the API key the header resolves to, so that every
    spelling of one key (``Bearer``, ``bearer``, extra spaces) is one credential; without a usable key,
    the caller's address. With it, why the presented header may not see a kept answer (a key revoked
    since, expired, unknown...), if it may not."""
    anonymous = b"anon:" + str((scope.get("client") or ("",))[0]).encode()
    if authorization is None:
        return anonymous, None
    from bountyboard.accounts.auth import authenticate_header

    async with get_database().sessionmaker() as session:
        try:
            actor = await authenticate_header(session, authorization.decode("latin-1"))
        except Problem as problem:  # the operation will refuse it too: nothing of it is kept
            return anonymous, problem
    return b"key:" + actor.key_id.encode(), None


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        raw_key = headers.get(HEADER)
        if raw_key is None:
            await self.app(scope, receive, send)
            return
        key = raw_key.decode("latin-1").strip()
        if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
            await send_problem(send, scope, 400, ErrorCode.INVALID_IDEMPOTENCY_KEY,
                               f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable characters.")
            return

        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)

        credential, problem = await _credential(scope, headers.get(b"authorization"))
        scope_hash = _mac(credential, b"POST", scope["path"].encode(), key.encode())
        outcome, record = await _claim(scope_hash, _mac(body))
        if outcome != "proceed" and problem is not None:  # no replay, nor hint of one, for a bad credential
            await send_problem(send, scope, problem.status, problem.code, problem.detail, headers=problem.headers)
            return
        if outcome == "mismatch":
            await send_problem(send, scope, 422, ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
                               "This Idempotency-Key was used with a different request body. Use a new key.")
            return
        if outcome == "in_use":
            await send_problem(send, scope, 409, ErrorCode.IDEMPOTENCY_KEY_IN_USE,
                               "A request with this Idempotency-Key is still being processed. Retry later.")
            return
        if outcome == "replay" and record is not None:
            try:
                kept_body = crypto.decrypt(crypto.IDEMPOTENT_ANSWER, record.body or b"")
            except crypto.InvalidToken:  # kept under another server secret: the answer cannot be given again
                await send_problem(send, scope, 409, ErrorCode.IDEMPOTENCY_KEY_EXPIRED,
                                   "The answer kept for this Idempotency-Key is no longer readable. Use a new key.")
                return
            replay_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in record.headers or []]
            replay_headers.append((REPLAYED_HEADER, b"true"))
            await send({"type": "http.response.start", "status": record.status_code, "headers": replay_headers})
            await send({"type": "http.response.body", "body": kept_body})
            return

        delivered = False

        async def replay_receive() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        # The answer is recorded before the caller sees any of it, so that a retry sent the moment the
        # answer arrives finds it kept (a replay), never still in flight.
        start: Message | None = None
        chunks: list[bytes] = []
        finished = False

        async def capture(message: Message) -> None:
            nonlocal start, finished
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body_out = b"".join(chunks)
            # The operation's unit of work has ended (committed or rolled back) before its answer is sent
            # (storage.session.WriteSession), so no transaction, nor SQLite's lock, is held here.
            await _finish(scope_hash, start["status"], list(start.get("headers", [])), body_out)
            finished = True
            await send(start)
            await send({"type": "http.response.body", "body": body_out})

        try:
            await self.app(scope, replay_receive, capture)
        finally:
            if not finished:  # the operation failed before answering: free the key for a retry
                await _finish(scope_hash, 500, [], b"")
