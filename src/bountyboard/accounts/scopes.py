"""Roles and which scopes each kind of key may carry (DESIGN.md section 5); the scopes: ``contract.scopes``."""

from __future__ import annotations

from enum import StrEnum

from bountyboard.contract.scopes import AGENT_SCOPES, Scope


class Role(StrEnum):
    OPERATOR = "operator"
    PUBLISHER = "publisher"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    def acts_as(self, *roles: Role) -> bool:
        """Whether an account of this role may act in one of ``roles``: the one rule of roles, admin counts
        as every role. (Every check of a role goes through here, pages and templates included.)"""
        return self is Role.ADMIN or self in roles


class KeyKind(StrEnum):
    BOT = "bot"
    USER = "user"


_OPERATOR_SCOPES = frozenset({*AGENT_SCOPES, Scope.RUNS_WRITE})

ROLE_SCOPES: dict[Role, frozenset[Scope]] = {
    Role.OPERATOR: _OPERATOR_SCOPES,
    Role.PUBLISHER: _OPERATOR_SCOPES | {Scope.TASKS_PUBLISH},
    Role.REVIEWER: _OPERATOR_SCOPES | {Scope.CLAIMS_REVIEW},
    Role.ADMIN: frozenset(Scope),
}

# A bot works; it does not manage keys or bots, publish, review or administer.
BOT_KEY_SCOPES: frozenset[Scope] = frozenset(
    {*_OPERATOR_SCOPES} - {Scope.AGENT_MANAGE}
)


def allowed_scopes(role: Role, kind: KeyKind) -> frozenset[Scope]:
    scopes = ROLE_SCOPES[role]
    return scopes & BOT_KEY_SCOPES if kind is KeyKind.BOT else scopes
