"""Scopes, roles and which scopes each kind of key may carry (DESIGN.md section 5)."""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    PROFILE_READ = "profile:read"
    TASKS_READ = "tasks:read"
    TASKS_CLAIM = "tasks:claim"
    CLAIMS_SUBMIT = "claims:submit"
    CLAIMS_READ = "claims:read"
    JUDGE_READ = "judge:read"
    LEADERBOARD_READ = "leaderboard:read"
    AGENT_MANAGE = "agent:manage"
    WEBHOOKS_MANAGE = "webhooks:manage"
    RUNS_WRITE = "runs:write"
    TASKS_PUBLISH = "tasks:publish"
    CLAIMS_REVIEW = "claims:review"
    ADMIN = "admin"


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


# Scopes of the agent interface, in SPEC.md's order.
AGENT_SCOPES: tuple[Scope, ...] = (
    Scope.PROFILE_READ, Scope.TASKS_READ, Scope.TASKS_CLAIM, Scope.CLAIMS_SUBMIT, Scope.CLAIMS_READ,
    Scope.JUDGE_READ, Scope.LEADERBOARD_READ, Scope.AGENT_MANAGE, Scope.WEBHOOKS_MANAGE,
)

RECOMMENDED_WORKER_SCOPES: tuple[Scope, ...] = (
    Scope.TASKS_READ, Scope.TASKS_CLAIM, Scope.CLAIMS_READ, Scope.CLAIMS_SUBMIT,
)

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
