"""The methods both clients offer, declared once: each names an operation of :mod:`.operations`.

A method's parameters, defaults and docstring are its operation's. Read from
:class:`~bountyboard.client.Client`, a method runs the operation with blocking I/O and returns its
result (a stream is an iterator); read from :class:`~bountyboard.client.AsyncClient`, it is a
coroutine function running it with awaited I/O (a stream is an async iterator). Each client brings
its own ``_run`` and ``_stream``; a test holds that both offer the same methods and signatures.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from types import MethodType
from typing import TYPE_CHECKING, Any, ClassVar, Concatenate, Generic, ParamSpec, TypeVar, overload

from bountyboard.client.operations import FileOp, Operations, Stream
from bountyboard.client.state import StateFile

if TYPE_CHECKING:
    from bountyboard.client.aio import AsyncClient
    from bountyboard.client.client import Client

P = ParamSpec("P")
T = TypeVar("T")

# The annotation an operation returns under (``Op[t.Task]``), and what its method returns instead.
_WRAPPED = re.compile(r"(?:File)?Op\[(?P<single>.*)\]|Stream\[(?P<stream>.*)\]")


def _blocking(op: Callable[..., Any]) -> Callable[..., Any]:
    def method(client: Any, *args: Any, **kwargs: Any) -> Any:
        return client._run(op(client._ops, *args, **kwargs))
    return method


def _awaiting(op: Callable[..., Any]) -> Callable[..., Any]:
    async def method(client: Any, *args: Any, **kwargs: Any) -> Any:
        return await client._run(op(client._ops, *args, **kwargs))
    return method


def _streaming(op: Callable[..., Any]) -> Callable[..., Any]:
    def method(client: Any, *args: Any, **kwargs: Any) -> Any:
        return client._stream(op(client._ops, *args, **kwargs))
    return method


class _Method(Generic[P, T]):
    """The method of each client class that runs ``op``, made once per class on first use."""

    stream: ClassVar[bool] = False

    def __init__(self, op: Callable[..., Any]) -> None:
        self.op = op
        self.name = ""
        self._made: dict[type, Callable[..., Any]] = {}

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def function(self, owner: type[Surface]) -> Callable[..., Any]:
        made = self._made.get(owner)
        if made is None:
            made = self._made[owner] = self._make(owner.awaited)
        return made

    def _make(self, awaited: bool) -> Callable[..., Any]:
        make = _streaming if self.stream else _awaiting if awaited else _blocking
        method = make(self.op)
        method.__name__ = self.name
        method.__qualname__ = f"Surface.{self.name}"
        method.__doc__ = self.op.__doc__
        method.__signature__ = self._signature(awaited)  # type: ignore[attr-defined]
        return method

    def _signature(self, awaited: bool) -> inspect.Signature:
        """The operation's signature with the client in place of the operations, returning what the method does."""
        signature = inspect.signature(self.op)
        parameters = list(signature.parameters.values())[1:]
        client = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        returns: Any = inspect.Signature.empty
        match = _WRAPPED.fullmatch(str(signature.return_annotation))
        if match and match["single"]:
            returns = match["single"]
        elif match and match["stream"]:
            returns = f"{'AsyncIterator' if awaited else 'Iterator'}[{match['stream']}]"
        return signature.replace(parameters=[client, *parameters], return_annotation=returns)

    def _get(self, client: Surface | None, owner: type[Surface] | None) -> Callable[..., Any]:
        if client is None:
            assert owner is not None
            return self.function(owner)
        return MethodType(self.function(type(client)), client)


class _Run(_Method[P, T]):
    if TYPE_CHECKING:
        @overload
        def __get__(self, client: None, owner: type[Client]) -> Callable[Concatenate[Client, P], T]: ...
        @overload
        def __get__(self, client: None, owner: type[AsyncClient]) -> Callable[
            Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]: ...
        @overload
        def __get__(self, client: Client, owner: type[Client] | None = None) -> Callable[P, T]: ...
        @overload
        def __get__(self, client: AsyncClient, owner: type[AsyncClient] | None = None) -> Callable[
            P, Coroutine[Any, Any, T]]: ...
        def __get__(self, client: Surface | None, owner: type[Surface] | None = None) -> Any: ...
    else:
        __get__ = _Method._get


class _Stream(_Method[P, T]):
    stream = True

    if TYPE_CHECKING:
        @overload
        def __get__(self, client: None, owner: type[Client]) -> Callable[Concatenate[Client, P], Iterator[T]]: ...
        @overload
        def __get__(self, client: None, owner: type[AsyncClient]) -> Callable[
            Concatenate[AsyncClient, P], AsyncIterator[T]]: ...
        @overload
        def __get__(self, client: Client, owner: type[Client] | None = None) -> Callable[P, Iterator[T]]: ...
        @overload
        def __get__(self, client: AsyncClient, owner: type[AsyncClient] | None = None) -> Callable[
            P, AsyncIterator[T]]: ...
        def __get__(self, client: Surface | None, owner: type[Surface] | None = None) -> Any: ...
    else:
        __get__ = _Method._get


def run(op: Callable[Concatenate[Operations, P], FileOp[T]]) -> _Run[P, T]:
    """The method that runs one operation and answers its result."""
    return _Run(op)


def stream(op: Callable[Concatenate[Operations, P], Stream[T]]) -> _Stream[P, T]:
    """The method that runs a stream and hands out its items."""
    return _Stream(op)


class Surface:
    """The public methods of both clients: the table of the operations they run."""

    awaited: ClassVar[bool]
    state: StateFile
    _ops: Operations

    # Identity
    me = run(Operations.me)
    whoami = run(Operations.whoami)
    reputation = run(Operations.reputation)
    require_scopes = run(Operations.require_scopes)

    # Tasks and claims
    list_tasks = run(Operations.list_tasks)
    iter_tasks = stream(Operations.iter_tasks)
    get_task = run(Operations.get_task)
    claim = run(Operations.claim)
    list_claims = run(Operations.list_claims)
    claim_status = run(Operations.claim_status)
    heartbeat = run(Operations.heartbeat)
    release = run(Operations.release)
    submit = run(Operations.submit)
    upload = run(Operations.upload)
    file_link = run(Operations.file_link)
    appeal = run(Operations.appeal)

    # Publishing and review
    publish_task = run(Operations.publish_task)
    review_queue = run(Operations.review_queue)
    review = run(Operations.review)
    balance = run(Operations.balance)

    # Events
    events = run(Operations.events)
    latest_cursor = run(Operations.latest_cursor)
    iter_events = stream(Operations.iter_events)

    # Operator resources
    bots = run(Operations.bots)
    create_bot = run(Operations.create_bot)
    keys = run(Operations.keys)
    create_key = run(Operations.create_key)
    revoke_key = run(Operations.revoke_key)
    webhooks = run(Operations.webhooks)
    create_webhook = run(Operations.create_webhook)
    delete_webhook = run(Operations.delete_webhook)
    rotate_webhook_secret = run(Operations.rotate_webhook_secret)
    test_webhook = run(Operations.test_webhook)
    webhook_deliveries = run(Operations.webhook_deliveries)

    # State kept by the client alone (no request)

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return self._ops.persisted_claims()

    def forget_claim(self, claim_id: str) -> None:
        self._ops.forget_claim(claim_id)
