"""The unit of work of a writing route: its ``WriteSession`` is resolved after the caller is known, and only
a route that may write takes one (storage.session, storage.unit_of_work)."""

from __future__ import annotations

from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from bountyboard.app import create_app
from bountyboard.storage.session import read_session, write_session


def _calls(dependant: Dependant) -> list[object]:
    return [dependency.call for dependency in dependant.dependencies]


def _routes() -> list[Any]:
    """Every operation as it is served (with its routers' own dependencies)."""
    return [route for route in iter_route_contexts(create_app().routes) if isinstance(route.original_route, APIRoute)]


def test_a_write_session_is_the_last_dependency_resolved() -> None:
    """FastAPI resolves a route's dependencies in the order of its parameters; the write session begins the
    transaction (SQLite's write lock), so it comes after the key check, the form's CSRF check and the rest."""
    late = [route.path for route in _routes()
            if write_session in _calls(route.dependant) and _calls(route.dependant)[-1] is not write_session]
    assert not late


def test_reads_take_no_write_session_and_writes_no_read_session() -> None:
    reading_writes, writing_reads = [], []
    for route in _routes():
        calls = _calls(route.dependant)
        if route.methods <= {"GET", "HEAD"} and write_session in calls:
            reading_writes.append(route.path)
        if route.methods & {"POST", "PUT", "PATCH", "DELETE"} and read_session in calls and write_session in calls:
            writing_reads.append(route.path)
    assert not reading_writes and not writing_reads


def test_writing_routes_exist() -> None:
    """The checks above look at something: most writing routes take a write session."""
    assert sum(write_session in _calls(route.dependant) for route in _routes()) > 40
