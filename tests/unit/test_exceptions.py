"""The client and the runner raise exceptions of one hierarchy: catching the root catches them all."""

from __future__ import annotations

import pytest

from bountyboard.client import ApiError, BountyboardError, MissingScopeError
from bountyboard.client.worker import CommandFailed
from bountyboard.runner.adapters import PullError
from bountyboard.runner.agents import AgentError
from bountyboard.runner.jobs import JobError
from bountyboard.runner.push import PushError, QuotaExceeded
from bountyboard.runner.registry import RegistryError


@pytest.mark.parametrize("error", [
    ApiError(409, {"code": "no_slot_free", "detail": "taken"}),
    MissingScopeError(["tasks:claim"]),
    CommandFailed("exit 1"),
    PullError("no rows"),
    AgentError("timeout", "the agent ran out of time"),
    JobError("no tasks"),
    PushError("refused"),
    RegistryError("no such benchmark"),
])
def test_every_client_and_runner_error_is_a_bountyboard_error(error: Exception) -> None:
    with pytest.raises(BountyboardError):
        raise error


def test_the_quota_error_is_still_a_push_error() -> None:
    assert issubclass(QuotaExceeded, PushError)
