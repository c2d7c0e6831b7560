"""Every task and claim move against every state: the allowed ones apply, the others are refused with 409."""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

from bountyboard.errors import Problem
from bountyboard.market.models import Claim, ClaimStatus, ReviewState, Task, TaskStatus
from bountyboard.market.transitions import (
    CLAIM_TRANSITIONS,
    TASK_TRANSITIONS,
    ClaimMove,
    TaskMove,
    check_claim,
    move_claim,
    move_task,
    require_open,
)

T = TaskStatus
C = ClaimStatus
R = ReviewState

# The state machines of docs/lifecycle.md, written out here independently of the table under test.
TASK_MOVES: dict[TaskMove, tuple[set[TaskStatus], TaskStatus]] = {
    TaskMove.PUBLISH: ({T.DRAFT}, T.PUBLISHED),
    TaskMove.FILL: ({T.PUBLISHED}, T.IN_PROGRESS),
    TaskMove.REOPEN: ({T.IN_PROGRESS}, T.PUBLISHED),
    TaskMove.CANCEL: ({T.DRAFT, T.PUBLISHED, T.IN_PROGRESS}, T.CANCELLED),
    TaskMove.EXPIRE: ({T.DRAFT, T.PUBLISHED, T.IN_PROGRESS}, T.EXPIRED),
    TaskMove.CLOSE: ({T.PUBLISHED, T.IN_PROGRESS}, T.COMPLETED),
    TaskMove.COMPLETE: ({T.PUBLISHED, T.IN_PROGRESS}, T.COMPLETED),
}
CLAIM_MOVES: dict[ClaimMove, tuple[tuple[ClaimStatus, ReviewState], tuple[ClaimStatus, ReviewState]]] = {
    ClaimMove.HEARTBEAT: ((C.ACTIVE, R.NOT_SUBMITTED), (C.ACTIVE, R.NOT_SUBMITTED)),
    ClaimMove.RELEASE: ((C.ACTIVE, R.NOT_SUBMITTED), (C.RELEASED, R.NOT_SUBMITTED)),
    ClaimMove.EXPIRE: ((C.ACTIVE, R.NOT_SUBMITTED), (C.EXPIRED, R.NOT_SUBMITTED)),
    ClaimMove.SUBMIT: ((C.ACTIVE, R.NOT_SUBMITTED), (C.SUBMITTED, R.PENDING)),
    ClaimMove.ACCEPT: ((C.SUBMITTED, R.PENDING), (C.ACCEPTED, R.ACCEPTED)),
    ClaimMove.REJECT: ((C.SUBMITTED, R.PENDING), (C.REJECTED, R.REJECTED)),
    ClaimMove.APPEAL: ((C.REJECTED, R.REJECTED), (C.REJECTED, R.APPEALED)),
    ClaimMove.UPHOLD: ((C.REJECTED, R.APPEALED), (C.ACCEPTED, R.APPEAL_UPHELD)),
    ClaimMove.DENY: ((C.REJECTED, R.APPEALED), (C.REJECTED, R.APPEAL_DENIED)),
    ClaimMove.SEND_BACK: ((C.SUBMITTED, R.PENDING), (C.ACTIVE, R.NOT_SUBMITTED)),
}
# The verb a refusal names, as the API has always answered ("Cannot <verb> claim ...").
CLAIM_VERBS = {ClaimMove.HEARTBEAT: "extend", ClaimMove.SUBMIT: "submit to", ClaimMove.ACCEPT: "review",
               ClaimMove.REJECT: "review", ClaimMove.RELEASE: "release", ClaimMove.APPEAL: "appeal"}


def test_every_move_is_written_out_here() -> None:
    assert set(TASK_MOVES) == set(TaskMove)
    assert set(CLAIM_MOVES) == set(ClaimMove)


@pytest.mark.parametrize(("move", "status"), list(product(TaskMove, TaskStatus)))
def test_task_move(move: TaskMove, status: TaskStatus) -> None:
    task = Task(id="task_1", status=status.value)
    sources, target = TASK_MOVES[move]
    if status in sources:
        move_task(task, move)
        assert task.status == target.value
        return
    with pytest.raises(Problem) as refused:
        move_task(task, move)
    problem = refused.value
    assert (problem.status, problem.code) == (409, "invalid_transition")
    assert problem.extra == {"currentStatus": status.value}
    assert problem.detail.startswith("Cannot ") and problem.detail.endswith(f"task task_1: it is {status.value}.")
    assert task.status == status.value


@pytest.mark.parametrize(("move", "status", "review"), list(product(ClaimMove, ClaimStatus, ReviewState)))
def test_claim_move(move: ClaimMove, status: ClaimStatus, review: ReviewState) -> None:
    claim = Claim(id="clm_1", status=status.value, review_state=review.value)
    source, target = CLAIM_MOVES[move]
    if (status, review) == source:
        move_claim(claim, move)
        assert (claim.status, claim.review_state) == (target[0].value, target[1].value)
        return
    with pytest.raises(Problem) as refused:
        move_claim(claim, move)
    problem = refused.value
    assert (problem.status, problem.code) == (409, "invalid_transition")
    assert problem.extra == {"currentStatus": status.value, "reviewState": review.value}
    if move in CLAIM_VERBS:
        assert problem.detail == (f"Cannot {CLAIM_VERBS[move]} claim clm_1: it is {status.value} "
                                  f"(review {review.value}).")
    assert (claim.status, claim.review_state) == (status.value, review.value)


def test_a_check_refuses_without_moving() -> None:
    claim = Claim(id="clm_1", status=C.SUBMITTED.value, review_state=R.PENDING.value)
    check_claim(claim, ClaimMove.ACCEPT)
    assert claim.status == C.SUBMITTED.value
    with pytest.raises(Problem):
        check_claim(claim, ClaimMove.SUBMIT)


@pytest.mark.parametrize("status", list(TaskStatus))
def test_funding_and_accepting_need_an_open_task(status: TaskStatus) -> None:
    task = Task(id="task_1", status=status.value)
    if status in (T.PUBLISHED, T.IN_PROGRESS):
        require_open(task, "fund")
        return
    with pytest.raises(Problem) as refused:
        require_open(task, "fund")
    assert refused.value.status == 409
    assert refused.value.detail == f"Cannot fund task task_1: it is {status.value}."


def _diagram_edges(title: str) -> set[tuple[str, str]]:
    """The state-to-state arrows of one mermaid diagram in docs/lifecycle.md (start and end markers left out)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md").read_text()
    diagram = text.split(f"## {title}", 1)[1].split("```mermaid", 1)[1].split("```", 1)[0]
    return set(re.findall(r"^\s*([a-z_]+) --> ([a-z_]+)", diagram, flags=re.MULTILINE))


def test_the_lifecycle_diagrams_draw_the_tables() -> None:
    tasks = {(source.value, t.target.value) for t in TASK_TRANSITIONS.values() for source in t.sources}
    # draft -> draft is editing a draft: a change of fields, not of status.
    assert _diagram_edges("Tasks") - {("draft", "draft")} == tasks
    claims = {(source[0].value, t.target[0].value) for t in CLAIM_TRANSITIONS.values() for source in t.sources}
    assert _diagram_edges("Claims and review") == claims
