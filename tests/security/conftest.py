"""Helpers of the security tests: private servers with their own settings, and the site's log-in."""

from __future__ import annotations

import contextlib
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.api import Admin
from tests.support.server import LiveServer, database_url

PASSWORD = "correct horse battery"


@contextlib.contextmanager
def private_server(backend: str, data_dir: Path, env: dict[str, str | None] | None = None) -> Iterator[LiveServer]:
    """A server of its own (its counters are not shared with other tests) on a fresh database."""
    with database_url(backend, data_dir) as url, LiveServer(data_dir, url, env=env) as live:
        yield live


def site_client(base_url: str, headers: dict[str, str] | None = None) -> httpx.Client:
    """A browser-like client holding the anonymous double-submit CSRF cookie."""
    token = secrets.token_urlsafe(24)
    http = httpx.Client(base_url=base_url, headers=headers or {}, timeout=60, follow_redirects=False)
    http.cookies.set("bb_csrf", token)
    http.headers["x-test-csrf"] = token  # read back by site_form
    return http


def site_form(http: httpx.Client, path: str, fields: dict[str, str],
              headers: dict[str, str] | None = None) -> httpx.Response:
    return http.post(path, data={**fields, "csrf_token": http.headers["x-test-csrf"]}, headers=headers)


def log_in(http: httpx.Client, email: str, password: str = PASSWORD,
           headers: dict[str, str] | None = None) -> httpx.Response:
    return site_form(http, "/login", {"email": email, "password": password, "next": "/profile/"}, headers)


def new_user(admin: Admin, password: str = PASSWORD) -> str:
    email = f"user-{uuid.uuid4().hex[:10]}@example.com"
    response = admin.http.post("/v1/admin/users", json={"email": email, "role": "operator", "password": password})
    assert response.status_code == 200, response.text
    return email
