"""Test-side helpers to talk to a live server: accounts, bots and keys made over real HTTP."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.server import ADMIN_EMAIL, LiveServer

ALL_SCOPES = [
    "profile:read", "tasks:read", "tasks:claim", "claims:submit", "claims:read", "judge:read",
    "leaderboard:read", "agent:manage", "webhooks:manage", "runs:write", "tasks:publish", "claims:review", "admin",
]
OPERATOR_SCOPES = [
    "profile:read", "tasks:read", "tasks:claim", "claims:submit", "claims:read", "judge:read",
    "leaderboard:read", "agent:manage", "webhooks:manage", "runs:write",
]
BOT_SCOPES = [scope for scope in OPERATOR_SCOPES if scope != "agent:manage"]
ROLE_EXTRA = {"operator": [], "publisher": ["tasks:publish"], "reviewer": ["claims:review"], "admin": ALL_SCOPES}
_counter = itertools.count()
# Base URLs served in this process (tests/unit/conftest.py): requests to them go to the app directly.
IN_PROCESS: dict[str, httpx.BaseTransport] = {}


PROBLEM = "application/problem+json"
PROBLEM_FIELDS = {"type", "title", "status", "detail", "instance", "code", "requestId"}


def expect_problem(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """The body of an RFC 9457 problem answer with this status (and code, when given), checked whole."""
    assert response.status_code == status, f"{response.status_code} {response.text}"
    assert response.headers["content-type"] == PROBLEM, response.text
    body: dict[str, Any] = response.json()
    assert set(body) >= PROBLEM_FIELDS, body
    assert body["status"] == status and body["detail"], body
    assert body["requestId"] == response.headers["x-request-id"], body
    assert "Traceback" not in response.text
    if code is not None:
        assert body["code"] == code, body
    return body


def client(base_url: str, key: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30, transport=IN_PROCESS.get(base_url))


@dataclass
class Account:
    """A user with a user-scoped key carrying every scope its role allows."""

    base_url: str
    user: dict[str, Any]
    key: str
    scopes: list[str]
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = client(self.base_url, self.key)

    @property
    def id(self) -> str:
        return str(self.user["id"])

    def bot(self, name: str | None = None, scopes: list[str] | None = None, **fields: Any) -> Bot:
        """Create a bot of this operator and a bot key for it."""
        response = self.http.post("/v1/agent/bots", json={"name": name or f"bot-{uuid.uuid4().hex[:8]}", **fields})
        assert response.status_code == 201, response.text
        bot = response.json()
        key = self.http.post("/v1/profile/api-keys", json={"kind": "bot", "botId": bot["id"],
                                                           "scopes": scopes or BOT_SCOPES})
        assert key.status_code == 200, key.text
        return Bot(self.base_url, bot, key.json()["key"], self)

    def new_key(self, scopes: list[str], kind: str = "user", **fields: Any) -> str:
        response = self.http.post("/v1/profile/api-keys", json={"kind": kind, "scopes": scopes, **fields})
        assert response.status_code == 200, response.text
        return str(response.json()["key"])


@dataclass
class Bot:
    base_url: str
    bot: dict[str, Any]
    key: str
    operator: Account
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = client(self.base_url, self.key)

    @property
    def id(self) -> str:
        return str(self.bot["id"])


class Admin:
    """The bootstrap admin of a live server, holding a key with every scope."""

    def __init__(self, base_url: str, key: str) -> None:
        self.base_url = base_url
        self.key = key
        self.http = client(base_url, key)

    @classmethod
    def of(cls, server: LiveServer) -> Admin:
        """The admin of ``server``, with a key made by ``bountyboard admin create-key``."""
        key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        return cls(server.base_url, key)

    def account(self, role: str = "operator", scopes: list[str] | None = None, email: str | None = None) -> Account:
        email = email or f"{role}-{next(_counter)}-{uuid.uuid4().hex[:6]}@example.com"
        response = self.http.post("/v1/admin/users", json={"email": email, "role": role,
                                                           "password": "correct horse battery"})
        assert response.status_code == 200, response.text
        user = response.json()
        wanted = scopes or (ALL_SCOPES if role == "admin" else OPERATOR_SCOPES + ROLE_EXTRA[role])
        key = self.http.post(f"/v1/admin/users/{user['id']}/api-keys", json={"kind": "user", "scopes": wanted})
        assert key.status_code == 200, key.text
        return Account(self.base_url, user, key.json()["key"], wanted)

    def advance_clock(self, seconds: float) -> None:
        response = self.http.post("/v1/admin/clock", json={"seconds": seconds})
        assert response.status_code == 200, response.text
