"""Small helpers shared by the event and webhook tests."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from typing import Any, Protocol

import httpx

from tests.market.support import Market
from tests.support.api import Account, Admin
from tests.support.server import psycopg_dsn


class HasHttp(Protocol):
    http: httpx.Client


def account(admin: Admin, role: str = "operator") -> Account:
    """A user with a user-scoped key and no password (nothing slow to hash)."""
    return Market(admin).account(role)


def subscribe(owner: HasHttp, url: str, events: list[str], **fields: Any) -> dict[str, Any]:
    response = owner.http.post("/v1/agent/webhooks", json={"url": url, "events": events, **fields})
    assert response.status_code == 201, response.text
    return dict(response.json())


def emit(admin: Admin, type: str, count: int = 1, **audience: str) -> list[dict[str, Any]]:
    """Events written through the server's own emit() (a test-deployment-only admin route)."""
    response = admin.http.post("/v1/admin/events", json={"type": type, "count": count, **audience})
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def feed(owner: HasHttp, **params: Any) -> list[dict[str, Any]]:
    """Every event the owner can see, following nextCursor until hasMore is false."""
    events: list[dict[str, Any]] = []
    cursor = params.pop("after", None)
    while True:
        response = owner.http.get("/v1/agent/events", params={**params, **({"after": cursor} if cursor else {})})
        assert response.status_code == 200, response.text
        page = response.json()
        events.extend(page["data"])
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            return events


def attempts(owner: HasHttp, webhook_id: str, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The endpoint's recorded attempts, oldest first, once at least ``count`` are recorded."""
    deadline = time.monotonic() + timeout
    while True:
        response = owner.http.get(f"/v1/agent/webhooks/{webhook_id}/deliveries", params={"limit": 100})
        assert response.status_code == 200, response.text
        data = list(reversed(response.json()["data"]))
        if len(data) >= count or time.monotonic() > deadline:
            assert len(data) >= count, data
            return data
        time.sleep(0.05)


def query(url: str, sql: str, *params: str) -> list[tuple[Any, ...]]:
    """Read the database of a server (usually a stopped one) straight, with ``%s`` placeholders."""
    if url.startswith("sqlite"):
        with contextlib.closing(sqlite3.connect(url.split("///", 1)[1])) as connection:
            return list(connection.execute(sql.replace("%s", "?"), params).fetchall())
    import psycopg2

    with contextlib.closing(psycopg2.connect(psycopg_dsn(url))) as connection, connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())
