"""Users, bots and API keys: the decisions of the accounts domain."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.auth import Actor, last_use
from bountyboard.accounts.keys import display_prefix, generate_key, hash_key
from bountyboard.accounts.models import ApiKey, Bot, User
from bountyboard.accounts.passwords import MIN_PASSWORD_LENGTH, hash_password_off_loop, verify_password_off_loop
from bountyboard.accounts.schemas import (
    ActorContext,
    ApiKeyCreated,
    ApiKeyOut,
    BotOut,
    CallerIdentity,
    Limits,
    UserOut,
)
from bountyboard.accounts.scopes import KeyKind, Role, allowed_scopes
from bountyboard.clock import now, rfc3339
from bountyboard.config import get_settings
from bountyboard.contract.pages import PAGE_SIZE_MAX
from bountyboard.contract.scopes import Scope
from bountyboard.errors import ErrorCode, Problem, conflict, invalid, not_found
from bountyboard.ids import new_id

MAX_ATTACHMENTS = 10  # shown to agents; the market's submission schema enforces it


def user_out(user: User) -> UserOut:
    return UserOut(id=user.id, email=user.email, displayName=user.display_name, role=user.role,
                   createdAt=rfc3339(user.created_at) or "")


def bot_out(bot: Bot) -> BotOut:
    return BotOut(id=bot.id, name=bot.name, description=bot.description, operatorId=bot.operator_id,
                  maxActiveClaims=bot.max_active_claims, createdAt=rfc3339(bot.created_at) or "")


def key_out(key: ApiKey) -> ApiKeyOut:
    return ApiKeyOut(
        id=key.id, name=key.name, kind=KeyKind(key.kind), botId=key.bot_id, scopes=list(key.scopes),
        prefix=key.display_prefix, createdAt=rfc3339(key.created_at) or "", expiresAt=rfc3339(key.expires_at),
        lastUsedAt=rfc3339(last_use(key)), revokedAt=rfc3339(key.revoked_at),
    )


# Users ---------------------------------------------------------------------------------------------

def caller_identity(actor: Actor) -> CallerIdentity:
    return CallerIdentity(
        id=actor.bot_id or actor.user_id, actorType=actor.kind, email=actor.user.email,
        displayName=actor.bot.name if actor.bot else actor.user.display_name, role=actor.role,
        botId=actor.bot_id, keyId=actor.key_id, scopes=sorted(actor.scopes),
    )


def actor_context(actor: Actor) -> ActorContext:
    """What an agent may do: its identity, its operator and the limits it works within."""
    return ActorContext(
        actorType=actor.kind, keyId=actor.key_id, scopes=sorted(actor.scopes),
        bot=bot_out(actor.bot) if actor.bot else None, operator=user_out(actor.user),
        limits=Limits(maxActiveClaims=actor.bot.max_active_claims if actor.bot else 1,
                      maxAttachments=MAX_ATTACHMENTS, pageSizeMax=PAGE_SIZE_MAX),
    )


def normalise_email(email: str) -> str:
    return email.strip().lower()


async def get_user_by_email(session: AsyncSession, email: str) -> User | None:
    return (await session.execute(select(User).where(User.email == normalise_email(email)))).scalar_one_or_none()


async def create_user(
    session: AsyncSession, email: str, role: Role, password: str | None = None, display_name: str | None = None,
) -> User:
    if password is not None and len(password) < MIN_PASSWORD_LENGTH:
        raise invalid(f"The password must have at least {MIN_PASSWORD_LENGTH} characters.",
                      [{"field": "password", "message": "too short"}])
    email = normalise_email(email)
    taken = conflict(ErrorCode.EMAIL_TAKEN, f"An account with the email {email} already exists.")
    if await get_user_by_email(session, email) is not None:
        raise taken
    password_hash = await hash_password_off_loop(password) if password else None
    user = User(
        id=new_id("usr"), email=email, display_name=display_name or email.split("@")[0], role=role,
        password_hash=password_hash, created_at=now(),
    )
    await _insert_unique(session, user, taken)
    return user


async def _insert_unique(session: AsyncSession, row: User | Bot, taken: Problem) -> None:
    """Add and flush ``row``; breaking a unique constraint (a concurrent twin) answers ``taken``."""
    session.add(row)
    try:
        await session.flush()
    except IntegrityError as exc:
        await session.rollback()
        raise taken from exc


async def authenticate_password(session: AsyncSession, email: str, password: str) -> User | None:
    user = await get_user_by_email(session, email)
    # An unknown email still pays for one Argon2 verification, so response time reveals no accounts.
    valid = await verify_password_off_loop(user.password_hash if user else None, password)
    return user if user is not None and valid and not user.disabled else None


async def count_users(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(User))).scalar_one())


# Bots ----------------------------------------------------------------------------------------------

async def create_bot(session: AsyncSession, operator: User, name: str, description: str = "",
                     max_active_claims: int = 1) -> Bot:
    bot = Bot(id=new_id("bot"), operator_id=operator.id, name=name, description=description,
              max_active_claims=max_active_claims, created_at=now())
    await _insert_unique(session, bot, conflict(ErrorCode.BOT_NAME_TAKEN, f"You already have a bot named {name!r}."))
    return bot


async def list_bots(session: AsyncSession, operator_id: str) -> list[Bot]:
    rows = await session.execute(select(Bot).where(Bot.operator_id == operator_id).order_by(Bot.id))
    return list(rows.scalars())


async def get_own_bot(session: AsyncSession, operator_id: str, bot_id: str) -> Bot:
    bot = await session.get(Bot, bot_id)
    if bot is None or bot.operator_id != operator_id:
        raise not_found("bot", bot_id)
    return bot


# API keys ------------------------------------------------------------------------------------------

async def issue_key(
    session: AsyncSession,
    owner: User,
    kind: KeyKind,
    scopes: Iterable[Scope | str],
    *,
    bot_id: str | None = None,
    name: str = "",
    expires_at: datetime | None = None,
    granting_scopes: frozenset[str] | None = None,
    oauth_client_id: str | None = None,
) -> ApiKeyCreated:
    """Create a key for ``owner``. ``granting_scopes`` are the creating key's scopes, if a key creates it;
    ``oauth_client_id`` the OAuth client it is issued to as an access token."""
    requested = sorted({Scope(scope) for scope in scopes})
    permitted = allowed_scopes(owner.role, kind)
    not_for_kind = [scope.value for scope in requested if scope not in permitted]
    if not_for_kind:
        raise Problem(403, ErrorCode.SCOPE_NOT_ALLOWED,
                      f"A {kind.value} key of a {owner.role} cannot carry: {', '.join(not_for_kind)}.",
                      requiredScopes=not_for_kind)
    if granting_scopes is not None:
        escalated = [scope.value for scope in requested if scope.value not in granting_scopes]
        if escalated:
            raise Problem(403, ErrorCode.SCOPE_ESCALATION,
                          f"A key cannot create a key with scopes it lacks: {', '.join(escalated)}.",
                          requiredScopes=escalated)
    if kind is KeyKind.BOT:
        if not bot_id:
            raise invalid("A bot key needs botId.", [{"field": "botId", "message": "required for kind=bot"}])
        await get_own_bot(session, owner.id, bot_id)
    elif bot_id:
        raise invalid("A user key is not tied to a bot; leave botId out.",
                      [{"field": "botId", "message": "only for kind=bot"}])
    if expires_at is not None and expires_at <= now():
        raise invalid("expiresAt must be in the future.", [{"field": "expiresAt", "message": "in the past"}])

    secret = generate_key()
    record = ApiKey(
        id=new_id("key"), user_id=owner.id, bot_id=bot_id, kind=kind.value, name=name,
        key_hash=hash_key(secret, get_settings().effective_secret_key), display_prefix=display_prefix(secret),
        scopes=[scope.value for scope in requested], created_at=now(), expires_at=expires_at,
        oauth_client_id=oauth_client_id,
    )
    session.add(record)
    await session.flush()
    return ApiKeyCreated(**key_out(record).model_dump(), key=secret)


async def create_key_for_actor(session: AsyncSession, actor: Actor, kind: KeyKind, scopes: list[Scope],
                               bot_id: str | None, name: str, expires_at: datetime | None) -> ApiKeyCreated:
    if actor.kind is KeyKind.BOT:
        raise Problem(403, ErrorCode.USER_KEY_REQUIRED, "Bot keys cannot manage keys; use a user-scoped key.")
    return await issue_key(session, actor.user, kind, scopes, bot_id=bot_id, name=name, expires_at=expires_at,
                           granting_scopes=actor.scopes)


async def issue_key_as_admin(session: AsyncSession, admin: Actor, user_id: str, kind: KeyKind,
                             scopes: list[Scope], bot_id: str | None, name: str) -> ApiKeyCreated:
    """An admin issues a key to any user; even an admin key grants only scopes it holds itself."""
    user = await session.get(User, user_id)
    if user is None:
        raise not_found("user", user_id)
    return await issue_key(session, user, kind, scopes, bot_id=bot_id, name=name, granting_scopes=admin.scopes)


async def list_keys(session: AsyncSession, user_id: str) -> list[ApiKey]:
    rows = await session.execute(select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.id))
    return list(rows.scalars())


async def revoke_key(session: AsyncSession, user_id: str, key_id: str) -> ApiKey:
    key = await session.get(ApiKey, key_id, with_for_update=True)
    if key is None or key.user_id != user_id:
        raise not_found("API key", key_id)
    if key.revoked_at is None:
        key.revoked_at = now()
        await session.flush()
    return key
