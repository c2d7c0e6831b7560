"""The scopes an API key may carry (DESIGN.md section 5); who may hold which stays in ``accounts.scopes``."""

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


# Scopes of the agent interface, in SPEC.md's order.
AGENT_SCOPES: tuple[Scope, ...] = (
    Scope.PROFILE_READ, Scope.TASKS_READ, Scope.TASKS_CLAIM, Scope.CLAIMS_SUBMIT, Scope.CLAIMS_READ,
    Scope.JUDGE_READ, Scope.LEADERBOARD_READ, Scope.AGENT_MANAGE, Scope.WEBHOOKS_MANAGE,
)

# What a worker needs to find, claim and deliver tasks.
RECOMMENDED_WORKER_SCOPES: tuple[Scope, ...] = (
    Scope.TASKS_READ, Scope.TASKS_CLAIM, Scope.CLAIMS_READ, Scope.CLAIMS_SUBMIT,
)
