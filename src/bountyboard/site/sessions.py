"""Browser sessions: sign-in creates one, every page resolves it, sign-out ends it.

The cookie carries a random token; the table keeps only its SHA-256, so a copy of the database
cannot be replayed as a cookie. Each session has its own CSRF token, rendered into every form.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import User
from bountyboard.clock import now
from bountyboard.ids import new_id
from bountyboard.site.models import WebSession

SESSION_COOKIE = "bb_session"
SESSION_LIFETIME = timedelta(days=14)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def start(session: AsyncSession, user: User) -> str:
    """Open a session for ``user``; returns the cookie value (never stored)."""
    token = secrets.token_urlsafe(32)
    current = now()
    session.add(WebSession(id=new_id("ses"), token_hash=_digest(token), user_id=user.id,
                           csrf_token=secrets.token_urlsafe(32), created_at=current,
                           expires_at=current + SESSION_LIFETIME))
    await session.flush()
    return token


async def resolve(session: AsyncSession, token: str) -> tuple[WebSession, User] | None:
    """The live session and its user for a cookie value, or None (unknown, expired, disabled user)."""
    if not token or len(token) > 100:
        return None
    row = (await session.execute(
        select(WebSession, User).join(User, User.id == WebSession.user_id)
        .where(WebSession.token_hash == _digest(token))
    )).first()
    if row is None:
        return None
    web_session, user = row
    if web_session.expires_at <= now() or user.disabled:
        return None
    return web_session, user


async def end(session: AsyncSession, token: str) -> None:
    await session.execute(delete(WebSession).where(WebSession.token_hash == _digest(token)))
    await session.flush()
