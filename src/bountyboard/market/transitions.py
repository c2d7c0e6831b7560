"""The allowed moves of tasks and claims (docs/lifecycle.md draws them), and the one place that makes them.

A task's state is its status; a claim's is its status with its review state. Every flow changes a
state only through :func:`move_task` or :func:`move_claim`, which refuse a move the tables do not
allow with a 409 problem that carries the current state. Flows that must refuse before doing other
work (a payment, a lock) ask :func:`check_task` / :func:`check_claim` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from bountyboard.errors import ErrorCode, Problem, conflict
from bountyboard.market.models import OPEN_TASK_STATUSES, Claim, ClaimStatus, ReviewState, Task, TaskStatus

State = TypeVar("State")


@dataclass(frozen=True)
class Transition(Generic[State]):
    # How a refusal names the action: "Cannot <verb> task ...".
    verb: str
    sources: frozenset[State]
    target: State


class TaskMove(StrEnum):
    PUBLISH = "publish"
    FILL = "fill"  # the last free slot is taken
    REOPEN = "reopen"  # a slot of a full task frees
    CANCEL = "cancel"
    EXPIRE = "expire"  # the deadline passes
    CLOSE = "close"  # an arena is ranked and paid
    COMPLETE = "complete"  # a non-arena claim is accepted and paid


_ENDABLE = frozenset({TaskStatus.DRAFT, *OPEN_TASK_STATUSES})
_OPEN = frozenset(OPEN_TASK_STATUSES)

TASK_TRANSITIONS: dict[TaskMove, Transition[TaskStatus]] = {
    TaskMove.PUBLISH: Transition("publish", frozenset({TaskStatus.DRAFT}), TaskStatus.PUBLISHED),
    TaskMove.FILL: Transition("claim", frozenset({TaskStatus.PUBLISHED}), TaskStatus.IN_PROGRESS),
    TaskMove.REOPEN: Transition("free a slot of", frozenset({TaskStatus.IN_PROGRESS}), TaskStatus.PUBLISHED),
    TaskMove.CANCEL: Transition("cancel", _ENDABLE, TaskStatus.CANCELLED),
    TaskMove.EXPIRE: Transition("expire", _ENDABLE, TaskStatus.EXPIRED),
    TaskMove.CLOSE: Transition("close", _OPEN, TaskStatus.COMPLETED),
    TaskMove.COMPLETE: Transition("complete", _OPEN, TaskStatus.COMPLETED),
}

ClaimState = tuple[ClaimStatus, ReviewState]


class ClaimMove(StrEnum):
    HEARTBEAT = "heartbeat"  # the TTL is extended; the state stays
    RELEASE = "release"
    EXPIRE = "expire"  # the TTL runs out
    SUBMIT = "submit"
    ACCEPT = "accept"
    REJECT = "reject"  # opens the appeal window
    APPEAL = "appeal"
    UPHOLD = "uphold"  # the appeal succeeds: the claim is accepted
    DENY = "deny"  # the appeal fails: the rejection stands
    SEND_BACK = "send_back"  # a binding check failed: the claim is active again (checks, DESIGN.md 13)


_WORKING: ClaimState = (ClaimStatus.ACTIVE, ReviewState.NOT_SUBMITTED)
_PENDING: ClaimState = (ClaimStatus.SUBMITTED, ReviewState.PENDING)
_REJECTED: ClaimState = (ClaimStatus.REJECTED, ReviewState.REJECTED)
_APPEALED: ClaimState = (ClaimStatus.REJECTED, ReviewState.APPEALED)

CLAIM_TRANSITIONS: dict[ClaimMove, Transition[ClaimState]] = {
    ClaimMove.HEARTBEAT: Transition("extend", frozenset({_WORKING}), _WORKING),
    ClaimMove.RELEASE: Transition("release", frozenset({_WORKING}), (ClaimStatus.RELEASED, ReviewState.NOT_SUBMITTED)),
    ClaimMove.EXPIRE: Transition("expire", frozenset({_WORKING}), (ClaimStatus.EXPIRED, ReviewState.NOT_SUBMITTED)),
    ClaimMove.SUBMIT: Transition("submit to", frozenset({_WORKING}), _PENDING),
    ClaimMove.ACCEPT: Transition("review", frozenset({_PENDING}), (ClaimStatus.ACCEPTED, ReviewState.ACCEPTED)),
    ClaimMove.REJECT: Transition("review", frozenset({_PENDING}), _REJECTED),
    ClaimMove.APPEAL: Transition("appeal", frozenset({_REJECTED}), _APPEALED),
    ClaimMove.UPHOLD: Transition("uphold an appeal of", frozenset({_APPEALED}),
                                 (ClaimStatus.ACCEPTED, ReviewState.APPEAL_UPHELD)),
    ClaimMove.DENY: Transition("deny an appeal of", frozenset({_APPEALED}),
                               (ClaimStatus.REJECTED, ReviewState.APPEAL_DENIED)),
    ClaimMove.SEND_BACK: Transition("send back", frozenset({_PENDING}), _WORKING),
}


def task_conflict(task: Task, action: str, code: ErrorCode = ErrorCode.INVALID_TRANSITION) -> Problem:
    return conflict(code, f"Cannot {action} task {task.id}: it is {task.status}.", currentStatus=task.status)


def claim_conflict(claim: Claim, action: str, code: ErrorCode = ErrorCode.INVALID_TRANSITION) -> Problem:
    return conflict(code, f"Cannot {action} claim {claim.id}: it is {claim.status} (review {claim.review_state}).",
                    currentStatus=claim.status, reviewState=claim.review_state)


def task_allows(task: Task, move: TaskMove) -> bool:
    return task.status in TASK_TRANSITIONS[move].sources


def check_task(task: Task, move: TaskMove) -> None:
    if not task_allows(task, move):
        raise task_conflict(task, TASK_TRANSITIONS[move].verb)


def move_task(task: Task, move: TaskMove) -> None:
    check_task(task, move)
    task.status = TASK_TRANSITIONS[move].target


def require_open(task: Task, action: str) -> None:
    """Funding a task and accepting its claims need it published or in progress."""
    if task.status not in OPEN_TASK_STATUSES:
        raise task_conflict(task, action)


def claim_state(claim: Claim) -> ClaimState:
    return claim.status, claim.review_state


def claim_allows(claim: Claim, move: ClaimMove) -> bool:
    return claim_state(claim) in CLAIM_TRANSITIONS[move].sources


def check_claim(claim: Claim, move: ClaimMove) -> None:
    if not claim_allows(claim, move):
        raise claim_conflict(claim, CLAIM_TRANSITIONS[move].verb)


def move_claim(claim: Claim, move: ClaimMove) -> None:
    check_claim(claim, move)
    status, review_state = CLAIM_TRANSITIONS[move].target
    claim.status, claim.review_state = status, review_state
