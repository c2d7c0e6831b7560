"""Each operation of :mod:`.operations` as a method of both clients, declared once.

An operation is written once, with its parameters, result and docstring, as a generator (sans I/O, see
:mod:`.calls`); :class:`~.base.BaseClient` names it with one line, ``claim = method(Operations.claim)``.
Read from a :class:`Blocking` client (:class:`~bountyboard.client.Client`) that attribute is a function that
sends the requests and returns the result; read from an :class:`Awaiting` one
(:class:`~bountyboard.client.AsyncClient`), a coroutine function with the same parameters. A stream
(``iter_tasks``) gives an iterator, or an async iterator. A type checker sees the same through the overloads
of ``__get__``: the operation's own parameters (a ``ParamSpec``) and its result model, so a user's call is
checked against both; :func:`inspect.signature` and ``help()`` show them too.
"""

from __future__ import annotations

import inspect
import typing
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from bountyboard.client import calls
from bountyboard.client.operations import Operations

P = ParamSpec("P")
R = TypeVar("R")


class Blocking(ABC):
    """A client that drives each operation with blocking I/O."""

    _ops: Operations

    @abstractmethod
    def _run(self, op: calls.FileOp[R]) -> R: ...

    @abstractmethod
    def _stream(self, stream: calls.Stream[R]) -> Iterator[R]: ...


class Awaiting(ABC):
    """A client that drives each operation with awaited I/O."""

    _ops: Operations

    @abstractmethod
    async def _run(self, op: calls.FileOp[R]) -> R: ...

    @abstractmethod
    def _stream(self, stream: calls.Stream[R]) -> AsyncIterator[R]: ...


class _Method(ABC):
    """What both kinds of method share: the operation's name, docstring and signature, and the function made,
    as a bound method is, at each reading from a client, or from a client class (``Client.webhooks``, called
    with a client first, as any method read from a class)."""

    def __init__(self, operation: Callable[..., Any]) -> None:
        self.operation = operation
        self.__doc__ = operation.__doc__
        self._signatures: dict[tuple[bool, bool], inspect.Signature] = {}

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @abstractmethod
    def _call(self, client: Blocking | Awaiting) -> Callable[..., Any]:
        """The function that drives the operation with ``client``'s I/O."""

    @abstractmethod
    def _result(self, awaiting: bool) -> Any:
        """The result type a caller of the method receives (its signature's return annotation)."""

    def _get(self, client: Blocking | Awaiting | None, owner: type | None) -> Any:
        kind = type(client) if client is not None else owner
        if kind is None or not issubclass(kind, Blocking | Awaiting):
            return self  # read from BaseClient itself
        if client is None:
            def unbound(client: Any, /, *args: Any, **kwargs: Any) -> Any:
                return getattr(client, self.name)(*args, **kwargs)
            return self._dressed(unbound, kind, bound=False)
        return self._dressed(self._call(client), kind, bound=True)

    def _dressed(self, function: Callable[..., Any], owner: type, *, bound: bool) -> Callable[..., Any]:
        """``function`` with the operation's name, docstring and signature (with ``self`` unless bound)."""
        function.__name__, function.__doc__ = self.name, self.__doc__
        function.__module__, function.__qualname__ = owner.__module__, f"{owner.__qualname__}.{self.name}"
        function.__signature__ = self._signature(issubclass(owner, Awaiting), bound)  # type: ignore[attr-defined]
        return function

    def _signature(self, awaiting: bool, bound: bool) -> inspect.Signature:
        """The operation's parameters as evaluated (without ``self`` when bound) and the caller's result; made
        once for each kind of client (the annotations are read with :func:`typing.get_type_hints`)."""
        if (awaiting, bound) not in self._signatures:
            hints = typing.get_type_hints(self.operation)
            parameters = list(inspect.signature(self.operation).parameters.values())[1 if bound else 0:]
            self._signatures[awaiting, bound] = inspect.Signature(
                [p.replace(annotation=hints.get(p.name, p.annotation)) for p in parameters],
                return_annotation=self._result(awaiting))
        return self._signatures[awaiting, bound]

    def _returned(self) -> tuple[Any, Any]:
        """What the operation's generator yields and what it returns (``Op[T]``: ``Call`` and ``T``)."""
        yields, _, returns = typing.get_args(typing.get_type_hints(self.operation)["return"])
        return yields, returns


class Method(_Method, Generic[P, R]):
    """An operation that returns one result: ``client.claim(task_id)``, or ``await client.claim(task_id)``."""

    def __init__(self, operation: Callable[Concatenate[Operations, P], calls.FileOp[R]]) -> None:
        super().__init__(operation)

    @overload
    def __get__(self, client: None, owner: type[Blocking]) -> Callable[Concatenate[Blocking, P], R]: ...

    @overload
    def __get__(self, client: None, owner: type[Awaiting]
                ) -> Callable[Concatenate[Awaiting, P], Coroutine[Any, Any, R]]: ...

    @overload
    def __get__(self, client: Blocking, owner: type | None = None) -> Callable[P, R]: ...

    @overload
    def __get__(self, client: Awaiting, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, R]]: ...

    def __get__(self, client: Blocking | Awaiting | None, owner: type | None = None) -> Any:
        return self._get(client, owner)

    def _call(self, client: Blocking | Awaiting) -> Callable[..., Any]:
        operation, ops = self.operation, client._ops
        if isinstance(client, Awaiting):
            async def awaited(*args: Any, **kwargs: Any) -> Any:
                return await client._run(operation(ops, *args, **kwargs))
            return awaited

        def blocking(*args: Any, **kwargs: Any) -> Any:
            return client._run(operation(ops, *args, **kwargs))
        return blocking

    def _result(self, awaiting: bool) -> Any:
        return self._returned()[1]  # an awaited method's signature names what the await gives, as `async def`'s


class StreamMethod(_Method, Generic[P, R]):
    """An operation that yields results as it pages or polls: an iterator, or an async iterator."""

    def __init__(self, operation: Callable[Concatenate[Operations, P], calls.Stream[R]]) -> None:
        super().__init__(operation)

    @overload
    def __get__(self, client: None, owner: type[Blocking]) -> Callable[Concatenate[Blocking, P], Iterator[R]]: ...

    @overload
    def __get__(self, client: None, owner: type[Awaiting]
                ) -> Callable[Concatenate[Awaiting, P], AsyncIterator[R]]: ...

    @overload
    def __get__(self, client: Blocking, owner: type | None = None) -> Callable[P, Iterator[R]]: ...

    @overload
    def __get__(self, client: Awaiting, owner: type | None = None) -> Callable[P, AsyncIterator[R]]: ...

    def __get__(self, client: Blocking | Awaiting | None, owner: type | None = None) -> Any:
        return self._get(client, owner)

    def _call(self, client: Blocking | Awaiting) -> Callable[..., Any]:
        operation, ops = self.operation, client._ops

        def stream(*args: Any, **kwargs: Any) -> Any:
            return client._stream(operation(ops, *args, **kwargs))
        return stream

    def _result(self, awaiting: bool) -> Any:
        # A stream yields Item[T] among its calls and sleeps: T is what the caller iterates over.
        item = next(typing.get_args(kind)[0] for kind in typing.get_args(self._returned()[0])
                    if typing.get_origin(kind) is calls.Item)
        return (AsyncIterator if awaiting else Iterator)[item]
