"""Bearer authentication and scope checks: the one place that decides who may call what.

Routers declare what they need with ``Annotated[Actor, require(Scope.X)]``; FastAPI turns that
into the operation's security requirement in the OpenAPI document, so the contract and the check
cannot disagree.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastapi import Request, Response, Security, params
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer, SecurityScopes
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.keys import hash_key, is_well_formed
from bountyboard.accounts.models import ApiKey, Bot, User
from bountyboard.accounts.scopes import KeyKind, Role
from bountyboard.clock import now
from bountyboard.config import get_settings
from bountyboard.contract.scopes import Scope
from bountyboard.errors import ErrorCode, Problem
from bountyboard.ratelimit import limit_key
from bountyboard.statecache import StampedCache
from bountyboard.storage.engine import get_database
from bountyboard.storage.session import SessionSource, accounts_stamp, request_session_source

BEARER_SCHEME = "bearerAuth"
_LAST_USED_RESOLUTION = timedelta(seconds=60)
_LAST_USED_FLUSH_DELAY = 2.0  # seconds a key's use may wait before it is written
log = logging.getLogger("bountyboard")


@dataclass(frozen=True)
class Actor:
    """Who is calling: a bot (bot-scoped key) or a human operator (user-scoped key)."""

    user: User
    bot: Bot | None
    key_id: str
    scopes: frozenset[str]

    @property
    def kind(self) -> KeyKind:
        return KeyKind.BOT if self.bot is not None else KeyKind.USER

    @property
    def role(self) -> Role:
        return self.user.role

    @property
    def user_id(self) -> str:
        return self.user.id

    @property
    def bot_id(self) -> str | None:
        return self.bot.id if self.bot else None

    def has(self, scope: Scope) -> bool:
        return scope in self.scopes


def _unauthorized(detail: str, error: ErrorCode | None = ErrorCode.INVALID_TOKEN) -> Problem:
    challenge = 'Bearer realm="bountyboard"'
    if error:
        challenge += f', error="{error}", error_description="{detail}"'
    return Problem(401, ErrorCode.UNAUTHENTICATED if error is None else error, detail,
                   headers={"WWW-Authenticate": challenge})


def insufficient_scope(missing: list[str]) -> Problem:
    scope = " ".join(missing)
    return Problem(
        403, ErrorCode.INSUFFICIENT_SCOPE,
        f"This operation needs the scope {scope}, which the API key does not carry.",
        headers={"WWW-Authenticate": f'Bearer realm="bountyboard", error="insufficient_scope", scope="{scope}"'},
        requiredScopes=missing,
    )


@dataclass(frozen=True)
class _Resolved:
    actor: Actor
    last_used_at: datetime | None
    expires_at: datetime | None


# Valid keys, reused while the accounts version is unchanged (``stamps``, ``statecache``): a key revoked,
# changed or deleted, or its user or bot changed, by any process moves the version, so the next request
# anywhere reads it again; an expiry is each entry's clock bound.
_resolved: StampedCache[str, _Resolved] = StampedCache(1024)


async def resolve_key(session: SessionSource, key: str, stamp: str | None) -> Actor:
    """Look a presented key up by its keyed hash; refuse malformed, unknown, revoked or expired keys. A key
    resolved under the same accounts version (``stamp``) is taken as it was, without a session."""
    key_hash = hash_key(key, get_settings().effective_secret_key)
    resolved = _resolved.get(key_hash, stamp)
    if resolved is None:  # a key found among those resolved was well formed when it was resolved
        if not is_well_formed(key):
            raise _unauthorized("The API key is malformed (expected svc- followed by the secret).")
        resolved = await _look_up(session(), key_hash)
        _resolved.put(key_hash, stamp, resolved, until=resolved.expires_at)
    actor, current = resolved.actor, now()
    last_used_at = _pending_uses.get(actor.key_id, resolved.last_used_at)
    if last_used_at is None or current - last_used_at > _LAST_USED_RESOLUTION:
        _note_use(actor.key_id, current)
    return actor


async def _look_up(session: AsyncSession, key_hash: str) -> _Resolved:
    row = (
        await session.execute(
            select(ApiKey, User, Bot).join(User, User.id == ApiKey.user_id).outerjoin(Bot, Bot.id == ApiKey.bot_id)
            .where(ApiKey.key_hash == key_hash)
        )
    ).first()
    if row is None:
        raise _unauthorized("The API key is not known.")
    api_key, user, bot = row
    if api_key.revoked_at is not None:
        raise _unauthorized("The API key was revoked.")
    if api_key.expires_at is not None and api_key.expires_at <= now():
        raise _unauthorized("The API key has expired.")
    if user.disabled:
        raise _unauthorized("The account that owns this key is disabled.")
    # Out of the session: the cache shares these rows with later requests, and this request's rollback (a
    # refused write) would otherwise expire them, leaving later requests a detached row they cannot read.
    for row_object in (api_key, user, bot):
        if row_object is not None:
            session.expunge(row_object)
    actor = Actor(user=user, bot=bot, key_id=api_key.id, scopes=frozenset(api_key.scopes))
    return _Resolved(actor, api_key.last_used_at, api_key.expires_at)


# Key uses waiting to be written: written together, shortly after, in a transaction of their own, so
# that a request's authentication only reads (one transaction per request, no write lock for a GET).
_pending_uses: dict[str, datetime] = {}
_flushing: set[asyncio.Task[None]] = set()


def _note_use(key_id: str, at: datetime) -> None:
    _pending_uses[key_id] = at
    if not _flushing:
        _flushing.add(asyncio.get_running_loop().create_task(_flush_later()))


async def _flush_later() -> None:
    try:
        while _pending_uses:
            await asyncio.sleep(_LAST_USED_FLUSH_DELAY)
            await flush_key_uses()
    finally:  # with no await since the loop's test, so no mark can slip in between
        _flushing.clear()


def last_use(key: ApiKey) -> datetime | None:
    """When the key was last used, counting this process's marks not written yet."""
    return _pending_uses.get(key.id, key.last_used_at)


async def flush_key_uses() -> None:
    """Write the keys' pending ``lastUsedAt`` marks (shortly after a use, and at shutdown)."""
    if not _pending_uses:
        return
    uses = list(_pending_uses.items())
    _pending_uses.clear()
    try:
        async with get_database().sessionmaker() as session:
            await session.execute(update(ApiKey), [{"id": key_id, "last_used_at": at} for key_id, at in uses])
            await session.commit()
    except Exception:  # a mark is bookkeeping: losing one must not fail anything
        log.warning("could not record the last use of %d API keys", len(uses), exc_info=True)


async def authenticate_header(session: AsyncSession, authorization: str) -> Actor:
    """The actor behind an ``Authorization`` header value (for callers outside FastAPI's dependencies)."""
    scheme, _, key = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise _unauthorized("The Authorization header must be: Bearer svc-...", error=ErrorCode.INVALID_REQUEST)
    return await resolve_key(lambda: session, key.strip(), None)


class ApiKeyBearer(HTTPBearer):
    """The check behind ``require``: a valid key, carrying every scope the operation names, counted
    against its key's rate limit. Also the bearer scheme of the OpenAPI document.

    One dependency with no dependencies of its own (it reads the header itself and takes the request's
    session from :func:`request_session`, before a writing route's transaction begins: a route lists its
    ``WriteSession`` after this dependency): FastAPI's cost per request grows with every dependency it
    resolves, and this one is on every authenticated route. With ``optional``, a request without an
    ``Authorization`` header is anonymous (None) instead of refused."""

    def __init__(self, *, optional: bool) -> None:
        super().__init__(scheme_name=BEARER_SCHEME, bearerFormat="svc-<secret>", auto_error=False,
                         description="An API key created on the profile page or with POST /v1/profile/api-keys.")
        self.optional = optional

    async def __call__(self, request: Request, security_scopes: SecurityScopes) -> Actor | None:  # type: ignore[override]
        credentials = await super().__call__(request)
        if credentials is None:
            if request.headers.get("authorization"):
                raise _unauthorized("The Authorization header must be: Bearer svc-...",
                                    error=ErrorCode.INVALID_REQUEST)
            if self.optional:
                return None
            raise _unauthorized("This operation needs an API key: send Authorization: Bearer svc-...", error=None)
        actor = await resolve_key(request_session_source(request), credentials.credentials,
                                  await accounts_stamp(request))
        missing = [scope for scope in security_scopes.scopes if scope not in actor.scopes]
        if missing:
            raise insufficient_scope(missing)
        await limit_key(request, actor.key_id)  # the general per-key rate limit (bountyboard.ratelimit)
        return actor


authenticated = ApiKeyBearer(optional=False)
optionally_authenticated = ApiKeyBearer(optional=True)


def require(*scopes: Scope) -> Any:
    """``Annotated[Actor, require(Scope.TASKS_READ)]``: a valid key carrying every named scope."""
    return Security(authenticated, scopes=[str(scope) for scope in scopes])


def require_optional(*scopes: Scope) -> Any:
    return Security(optionally_authenticated, scopes=[str(scope) for scope in scopes])


def require_user_key(actor: Actor, action: str) -> None:
    if actor.kind is not KeyKind.USER:
        raise Problem(403, ErrorCode.USER_KEY_REQUIRED, f"{action} needs a user-scoped key; bot keys cannot do it.")


def require_role(actor: Actor, *roles: Role) -> None:
    if not actor.role.acts_as(*roles):
        names = ", ".join(role.value for role in roles)
        raise Problem(403, ErrorCode.ROLE_REQUIRED, f"This operation is for accounts with the role {names}.")


class KeyOnlyRoute(APIRoute):
    """A route whose endpoint takes the request and the caller, ``(request, actor: Annotated[Actor,
    require(...)])``, and reads everything else itself (the most polled reads). The caller is checked by the
    same ``ApiKeyBearer`` with the same scopes the annotation names, called directly: FastAPI's dependency
    solving, the largest part of its cost per request, is skipped (docs/performance.md). The OpenAPI
    document is FastAPI's, from the same signature."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        check, scopes = _key_check_of(self.endpoint)
        endpoint = self.endpoint

        async def handler(request: Request) -> Response:
            response: Response = await endpoint(request, await check(request, scopes))
            return response

        return handler


def _key_check_of(endpoint: Callable[..., Any]) -> tuple[ApiKeyBearer, SecurityScopes]:
    """The key check and scopes of an endpoint of :class:`KeyOnlyRoute`; a TypeError at start for any other."""
    parameters = list(inspect.signature(endpoint, eval_str=True).parameters.values())
    if len(parameters) == 2 and parameters[0].annotation is Request:
        for marker in getattr(parameters[1].annotation, "__metadata__", ()):
            if isinstance(marker, params.Security) and isinstance(marker.dependency, ApiKeyBearer):
                return marker.dependency, SecurityScopes(list(marker.scopes or ()))
    raise TypeError(f"{endpoint.__qualname__}: a KeyOnlyRoute endpoint takes (request: Request, "
                    "actor: Annotated[Actor, require(...)]) only")
