"""Slots: the last free slot fills a task, a freed slot reopens it, and only a held slot frees."""

from __future__ import annotations

from bountyboard.market.models import Claim, Task, TaskStatus
from bountyboard.market.slots import free_slot, take_slot


def _task(max_claims: int, taken: int, status: TaskStatus) -> Task:
    return Task(id="task_1", status=status.value, max_claims=max_claims, slots_taken=taken)


def test_taking_the_last_slot_puts_the_task_in_progress() -> None:
    task = _task(2, 0, TaskStatus.PUBLISHED)
    take_slot(task)
    assert (task.slots_taken, task.status) == (1, "published")
    take_slot(task)
    assert (task.slots_taken, task.status) == (2, "in_progress")


def test_freeing_a_slot_of_a_full_task_reopens_it_once() -> None:
    task = _task(2, 2, TaskStatus.IN_PROGRESS)
    first, second = Claim(id="a", holds_slot=True), Claim(id="b", holds_slot=True)
    free_slot(task, first)
    assert (task.slots_taken, task.status, first.holds_slot) == (1, "published", False)
    free_slot(task, first)  # already freed: nothing changes
    assert task.slots_taken == 1
    free_slot(task, second)
    assert (task.slots_taken, task.status) == (0, "published")


def test_freeing_a_slot_of_an_ended_task_keeps_its_status() -> None:
    task = _task(1, 1, TaskStatus.COMPLETED)
    free_slot(task, Claim(id="a", holds_slot=True))
    assert (task.slots_taken, task.status) == (0, "completed")
