"""HTTP routes of the accounts domain: caller identity, bots, API keys, admin bootstrap."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, EmailStr, Field
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard import clock
from bountyboard.accounts import service
from bountyboard.accounts.auth import Actor, require, require_role, require_user_key
from bountyboard.accounts.models import User
from bountyboard.accounts.schemas import (
    ActorContext,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    ApiModel,
    BotCreate,
    BotOut,
    CallerIdentity,
    Limits,
    UserOut,
)
from bountyboard.accounts.scopes import KeyKind, Role, Scope
from bountyboard.config import get_settings
from bountyboard.db import get_session
from bountyboard.errors import not_found, problem_responses
from bountyboard.pagination import PAGE_SIZE_MAX, DataList, Page, PageParams, page_params

Session = Annotated[AsyncSession, Depends(get_session)]
MAX_ATTACHMENTS = 10

identity_router = APIRouter(tags=["identity"], responses=problem_responses(401))
router = APIRouter(prefix="/v1", responses=problem_responses(401, 403, 422))


@identity_router.get("/api/auth/me", summary="Identity of the caller (whoami)", response_model=CallerIdentity)
async def whoami(actor: Annotated[Actor, require()]) -> CallerIdentity:
    return CallerIdentity(
        id=actor.bot_id or actor.user_id, actorType=actor.kind, email=actor.user.email,
        displayName=actor.bot.name if actor.bot else actor.user.display_name, role=actor.role,
        botId=actor.bot_id, keyId=actor.key_id, scopes=sorted(actor.scopes),
    )


@router.get("/agent/me", tags=["agent"], summary="Current agent actor context", response_model=ActorContext)
async def agent_me(actor: Annotated[Actor, require()]) -> ActorContext:
    return ActorContext(
        actorType=actor.kind, keyId=actor.key_id, scopes=sorted(actor.scopes),
        bot=service.bot_out(actor.bot) if actor.bot else None, operator=service.user_out(actor.user),
        limits=Limits(maxActiveClaims=actor.bot.max_active_claims if actor.bot else 1,
                      maxAttachments=MAX_ATTACHMENTS, pageSizeMax=PAGE_SIZE_MAX),
    )


@router.get("/agent/bots", tags=["bots"], summary="List bot identities", response_model=Page[BotOut])
async def list_bots(session: Session, actor: Annotated[Actor, require(Scope.AGENT_MANAGE)],
                    paging: Annotated[PageParams, Depends(page_params)]) -> Page[BotOut]:
    bots = await service.list_bots(session, actor.user_id)  # an operator's few bots: paged in memory
    shown = bots[paging.offset:paging.offset + paging.pageSize]
    return Page.of([service.bot_out(bot) for bot in shown], paging, len(bots))


@router.post("/agent/bots", tags=["bots"], summary="Create a bot identity", status_code=status.HTTP_201_CREATED,
             response_model=BotOut, responses=problem_responses(409))
async def create_bot(body: BotCreate, session: Session,
                     actor: Annotated[Actor, require(Scope.AGENT_MANAGE)]) -> BotOut:
    require_user_key(actor, "Creating a bot")
    bot = await service.create_bot(session, actor.user, body.name, body.description, body.maxActiveClaims)
    return service.bot_out(bot)


@router.get("/profile", tags=["profile"], summary="The caller's operator profile", response_model=UserOut)
async def profile(actor: Annotated[Actor, require(Scope.PROFILE_READ)]) -> UserOut:
    return service.user_out(actor.user)


@router.get("/profile/api-keys", tags=["profile"], summary="List the operator's API keys",
            response_model=DataList[ApiKeyOut])
async def list_api_keys(session: Session,
                        actor: Annotated[Actor, require(Scope.PROFILE_READ)]) -> DataList[ApiKeyOut]:
    require_user_key(actor, "Listing keys")
    return DataList(data=[service.key_out(key) for key in await service.list_keys(session, actor.user_id)])


@router.post("/profile/api-keys", tags=["profile"], summary="Create a scoped API key (shown once)",
             response_model=ApiKeyCreated, responses=problem_responses(404))
async def create_api_key(body: ApiKeyCreate, session: Session,
                         actor: Annotated[Actor, require(Scope.AGENT_MANAGE)]) -> ApiKeyCreated:
    return await service.create_key_for_actor(session, actor, body.kind, body.scopes, body.botId, body.name,
                                              body.expiresAt)


@router.delete("/profile/api-keys/{id}", tags=["profile"], summary="Revoke an API key at once",
               response_model=ApiKeyOut, responses=problem_responses(404))
async def revoke_api_key(id: str, session: Session,
                         actor: Annotated[Actor, require(Scope.AGENT_MANAGE)]) -> ApiKeyOut:
    require_user_key(actor, "Revoking a key")
    return service.key_out(await service.revoke_key(session, actor.user_id, id))


# Admin ---------------------------------------------------------------------------------------------

admin_router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=problem_responses(401, 403, 422))


class UserCreate(ApiModel):
    email: EmailStr
    role: Role = Role.OPERATOR
    password: str | None = Field(default=None, min_length=10, max_length=200)
    displayName: str | None = Field(default=None, max_length=120)


class AdminKeyCreate(ApiModel):
    kind: KeyKind = KeyKind.USER
    botId: str | None = None
    scopes: list[Scope] = Field(min_length=1)
    name: str = ""


class ClockAdvance(ApiModel):
    seconds: float = Field(gt=0, le=10 * 365 * 86400)


class Hold(ApiModel):
    seconds: float = Field(gt=0, le=10)


class ClockState(BaseModel):
    offsetSeconds: float
    now: str


@admin_router.post("/users", summary="Create a user (admin)", response_model=UserOut,
                   responses=problem_responses(409))
async def admin_create_user(body: UserCreate, session: Session,
                            actor: Annotated[Actor, require(Scope.ADMIN)]) -> UserOut:
    require_role(actor, Role.ADMIN)
    user = await service.create_user(session, body.email, body.role, body.password, body.displayName)
    return service.user_out(user)


@admin_router.post("/users/{id}/api-keys", summary="Issue an API key to a user (admin)",
                   response_model=ApiKeyCreated, responses=problem_responses(404))
async def admin_create_key(id: str, body: AdminKeyCreate, session: Session,
                           actor: Annotated[Actor, require(Scope.ADMIN)]) -> ApiKeyCreated:
    require_role(actor, Role.ADMIN)
    user = await session.get(User, id)
    if user is None:
        raise not_found("user", id)
    # Even an admin key grants only scopes it holds itself.
    return await service.issue_key(session, user, body.kind, body.scopes, bot_id=body.botId, name=body.name,
                                   granting_scopes=actor.scopes)


@admin_router.post("/clock", summary="Move the service clock forward (test deployments only)",
                   response_model=ClockState, include_in_schema=False)
async def admin_advance_clock(body: ClockAdvance, actor: Annotated[Actor, require(Scope.ADMIN)]) -> ClockState:
    require_role(actor, Role.ADMIN)
    if not get_settings().enable_test_clock:
        raise not_found("route", "/v1/admin/clock")
    offset = clock.advance(body.seconds)
    return ClockState(offsetSeconds=offset, now=clock.rfc3339(clock.now()) or "")


@admin_router.post("/test/hold", summary="Answer after a delay (test deployments only)", include_in_schema=False)
async def admin_hold(body: Hold, actor: Annotated[Actor, require(Scope.ADMIN)]) -> dict[str, float]:
    """A deliberately slow operation, so tests can race a request that is still in flight."""
    require_role(actor, Role.ADMIN)
    if not get_settings().enable_test_clock:
        raise not_found("route", "/v1/admin/test/hold")
    await asyncio.sleep(body.seconds)
    return {"heldSeconds": body.seconds}
