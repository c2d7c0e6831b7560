"""What every operation of the SDK stands on: one key's state file and scopes, checked before a call.

:class:`~.operations.Operations` builds on this; see :mod:`.operations` for how the clients drive them.
"""

from __future__ import annotations

from typing import Any, cast

from bountyboard.client import types as t
from bountyboard.client.calls import Call, MissingScopeError, Op, resource_path
from bountyboard.client.state import StateFile
from bountyboard.contract.scopes import Scope


class ScopedOperations:
    """The operations of one key. ``check_scopes`` False leaves every refusal to the service."""

    def __init__(self, state: StateFile, *, check_scopes: bool = True) -> None:
        self.state = state
        self.check_scopes = check_scopes
        self._scopes: frozenset[str] | None = None

    def _need(self, scope: Scope, action: str) -> Op[None]:
        if not self.check_scopes:
            return
        if self._scopes is None:
            yield from self.me()
        assert self._scopes is not None
        if scope.value not in self._scopes:
            raise MissingScopeError([scope.value], action)

    def _call(self, scope: Scope, action: str, method: str, template: str, /, *,
              params: dict[str, Any] | None = None, content: bytes | None = None, **ids: str) -> Op[Any]:
        """The operation that is one call needing one scope: ``method`` on the path ``template`` names, with
        ``ids`` filled in by :func:`resource_path` (so a malformed id is refused before any request)."""
        path = resource_path(template, **ids)
        yield from self._need(scope, action)
        return (yield Call(method, path, params, content=content))

    def me(self) -> Op[t.ActorContext]:
        """The actor context of the key (``GET /v1/agent/me``); refreshes the known scopes."""
        context = cast(t.ActorContext, (yield Call("GET", "/v1/agent/me")))
        self._scopes = frozenset(context["scopes"])
        return context
