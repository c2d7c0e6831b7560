"""HTTP routes of the accounts domain: caller identity, bots, API keys, admin bootstrap."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, status

from bountyboard.accounts import service
from bountyboard.accounts.auth import Actor, require
from bountyboard.accounts.dependencies import AdminActor, user_key
from bountyboard.accounts.schemas import (
    ActorContext,
    AdminKeyCreate,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    BotCreate,
    BotOut,
    CallerIdentity,
    UserCreate,
    UserOut,
)
from bountyboard.contract.scopes import Scope
from bountyboard.errors import problem_responses
from bountyboard.pagination import DataList, Page, Paging
from bountyboard.storage.session import ReadSession, WriteSession

identity_router = APIRouter(tags=["identity"], responses=problem_responses(401))
router = APIRouter(prefix="/v1", responses=problem_responses(401, 403, 422))


@identity_router.get("/api/auth/me", summary="Identity of the caller (whoami)", response_model=CallerIdentity)
async def whoami(actor: Annotated[Actor, require()]) -> CallerIdentity:
    return service.caller_identity(actor)


@router.get("/agent/me", tags=["agent"], summary="Current agent actor context", response_model=ActorContext)
async def agent_me(actor: Annotated[Actor, require()]) -> ActorContext:
    return service.actor_context(actor)


@router.get("/agent/bots", tags=["bots"], summary="List bot identities", response_model=Page[BotOut])
async def list_bots(session: ReadSession, actor: Annotated[Actor, require(Scope.AGENT_MANAGE)],
                    paging: Paging) -> Page[BotOut]:
    bots = await service.list_bots(session, actor.user_id)  # an operator's few bots: paged in memory
    shown = bots[paging.offset:paging.offset + paging.pageSize]
    return Page.of([service.bot_out(bot) for bot in shown], paging, len(bots))


@router.post("/agent/bots", tags=["bots"], summary="Create a bot identity", status_code=status.HTTP_201_CREATED,
             response_model=BotOut, responses=problem_responses(409))
async def create_bot(body: BotCreate, actor: Annotated[Actor, user_key(Scope.AGENT_MANAGE, "Creating a bot")],
                     session: WriteSession) -> BotOut:
    bot = await service.create_bot(session, actor.user, body.name, body.description, body.maxActiveClaims)
    return service.bot_out(bot)


@router.get("/profile", tags=["profile"], summary="The caller's operator profile", response_model=UserOut)
async def profile(actor: Annotated[Actor, require(Scope.PROFILE_READ)]) -> UserOut:
    return service.user_out(actor.user)


@router.get("/profile/api-keys", tags=["profile"], summary="List the operator's API keys",
            response_model=DataList[ApiKeyOut])
async def list_api_keys(session: ReadSession,
                        actor: Annotated[Actor, user_key(Scope.PROFILE_READ, "Listing keys")]) -> DataList[ApiKeyOut]:
    return DataList(data=[service.key_out(key) for key in await service.list_keys(session, actor.user_id)])


@router.post("/profile/api-keys", tags=["profile"], summary="Create a scoped API key (shown once)",
             response_model=ApiKeyCreated, responses=problem_responses(404))
async def create_api_key(body: ApiKeyCreate, actor: Annotated[Actor, require(Scope.AGENT_MANAGE)],
                         session: WriteSession) -> ApiKeyCreated:
    return await service.create_key_for_actor(session, actor, body.kind, body.scopes, body.botId, body.name,
                                              body.expiresAt)


@router.delete("/profile/api-keys/{id}", tags=["profile"], summary="Revoke an API key at once",
               response_model=ApiKeyOut, responses=problem_responses(404))
async def revoke_api_key(id: str, actor: Annotated[Actor, user_key(Scope.AGENT_MANAGE, "Revoking a key")],
                         session: WriteSession) -> ApiKeyOut:
    return service.key_out(await service.revoke_key(session, actor.user_id, id))


# Admin ---------------------------------------------------------------------------------------------

admin_router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=problem_responses(401, 403, 422))


@admin_router.post("/users", summary="Create a user (admin)", response_model=UserOut,
                   responses=problem_responses(409))
async def admin_create_user(body: UserCreate, actor: AdminActor, session: WriteSession) -> UserOut:
    user = await service.create_user(session, body.email, body.role, body.password, body.displayName)
    return service.user_out(user)


@admin_router.post("/users/{id}/api-keys", summary="Issue an API key to a user (admin)",
                   response_model=ApiKeyCreated, responses=problem_responses(404))
async def admin_create_key(id: str, body: AdminKeyCreate, actor: AdminActor, session: WriteSession) -> ApiKeyCreated:
    return await service.issue_key_as_admin(session, actor, id, body.kind, body.scopes, body.botId, body.name)
