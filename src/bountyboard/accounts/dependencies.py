"""Who may call an operation, as reusable FastAPI dependencies.

A router states its guarantees in its signature (``actor: AdminActor``, ``user: Publisher``)
instead of checking roles in its body. Each is built on ``require(Scope.X)``, so the scope stays
the operation's security requirement in the OpenAPI document, and every check runs before the
operation does.
"""

# No ``from __future__ import annotations``: FastAPI must read the closure's annotation, which names
# ``scope`` from the enclosing call, as an object rather than a string it would resolve in the module.
from typing import Annotated, Any

from fastapi import Depends

from bountyboard.accounts.auth import Actor, require, require_role, require_user_key
from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import Role
from bountyboard.contract.scopes import Scope


async def _admin(actor: Annotated[Actor, require(Scope.ADMIN)]) -> Actor:
    require_role(actor, Role.ADMIN)
    return actor


def user_key(scope: Scope, action: str) -> Any:
    """``Annotated[Actor, user_key(Scope.X, "Doing Y")]``: a user-scoped key (no bot key) carrying ``scope``;
    ``action`` names what a bot key was refused."""

    async def user_key_actor(actor: Annotated[Actor, require(scope)]) -> Actor:
        require_user_key(actor, action)
        return actor

    return Depends(user_key_actor)


async def _publisher(actor: Annotated[Actor, user_key(Scope.TASKS_PUBLISH, "Publishing tasks")]) -> User:
    require_role(actor, Role.PUBLISHER)
    return actor.user


async def _reviewer(actor: Annotated[Actor, user_key(Scope.CLAIMS_REVIEW, "Reviewing")]) -> User:
    require_role(actor, Role.REVIEWER)
    return actor.user


AdminActor = Annotated[Actor, Depends(_admin)]
"""An admin account's key carrying the admin scope."""
Publisher = Annotated[User, Depends(_publisher)]
"""The operator behind a user-scoped key with tasks:publish, of the publisher (or admin) role."""
Reviewer = Annotated[User, Depends(_reviewer)]
"""The operator behind a user-scoped key with claims:review, of the reviewer (or admin) role."""
