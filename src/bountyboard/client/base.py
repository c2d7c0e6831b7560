"""What :class:`~bountyboard.client.Client` and :class:`~bountyboard.client.AsyncClient` share.

Both hold one key's crash-safe :class:`~.state.StateFile` and the :class:`~.operations.Operations`
over it, and bring their own transport. Their methods are the operations themselves: each client turns
every :class:`~.operations.Operations` method into one of its own with a small typed helper
(``claim_status = blocking(Operations.claim_status)``, ``awaited`` for the asynchronous one), which keeps
the operation's name, parameters and docstring for a type checker and for ``help()``. Only the streams
(``iter_tasks``, ``iter_events``: an iterator, or an asynchronous one) are written out in each client.
``tests/client/test_async_client.py`` holds the two to the same methods, signatures and docstrings.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile

M = TypeVar("M", bound=Callable[..., Any])


class BaseClient:
    """The state both clients keep, and the methods that read it without a request."""

    def __init__(self, state: StateFile, *, check_scopes: bool) -> None:
        self.state = state
        self._ops = Operations(state, check_scopes=check_scopes)

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return self._ops.persisted_claims()

    def forget_claim(self, claim_id: str) -> None:
        """Drop a claim (and its pending submission) from the state file; the service is not told."""
        self._ops.forget_claim(claim_id)


def presented_as(method: M, owner: str, operation: Callable[..., Any]) -> M:
    """``method``, which runs ``operation``, named and documented as ``owner``'s method of that name: the
    operation's docstring and parameters, returning what the operation returns when run (the last type
    argument of its generator), so that ``help()`` and :func:`inspect.signature` show what a checker does."""
    functools.update_wrapper(method, operation, assigned=("__name__", "__doc__"))
    method.__qualname__ = f"{owner}.{operation.__name__}"
    signature = inspect.signature(operation, eval_str=True)
    result = typing.get_args(signature.return_annotation)[-1]
    # A function takes any attribute; inspect.signature reads this one (typeshed does not declare it).
    method.__signature__ = signature.replace(return_annotation=result)  # type: ignore[attr-defined]
    return method
