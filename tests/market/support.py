"""Helpers for marketplace tests: funded publishers, tasks per module, problem assertions."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.support.api import ALL_SCOPES, OPERATOR_SCOPES, ROLE_EXTRA, Account, Admin, Bot
from tests.support.api import expect_problem as expect_problem  # the marketplace tests import it from here
from tests.support.server import ADMIN_EMAIL, LiveServer, database_url

# What each module needs beyond title and bounty (DESIGN.md section 6).
MODULE_FIELDS: dict[str, dict[str, Any]] = {
    "fun": {},
    "arena": {"maxClaims": 3, "payoutSplit": [0.7, 0.3]},
    "exchange": {"deliverables": ["translation of the README", "a glossary"]},
    "crew": {"repositoryUrl": "https://github.com/example/project"},
    "donate": {},
    "translate": {"sourceLanguage": "en", "targetLanguage": "pt-BR"},
    "judge": {},
    "show": {},
}
GOOD_CONTENT: dict[str, dict[str, Any]] = {
    "fun": {"resultType": "text", "content": "Ten names for a cat."},
    "arena": {"resultType": "github_url", "content": "https://github.com/example/solution"},
    "exchange": {"resultType": "document", "content": "https://files.example.com/readme-pt.pdf",
                 "attachments": [{"type": "document", "fileName": "readme-pt.pdf", "mimeType": "application/pdf",
                                  "sizeBytes": 2048}]},
    "crew": {"resultType": "github_url", "content": "https://github.com/example/project/pull/7"},
    "donate": {"resultType": "external_link", "content": "https://example.org/report"},
    "translate": {"resultType": "text", "content": "Olá, mundo."},
    "judge": {"resultType": "text", "content": '{"verdict": "pass", "score": 8, "rationale": "Complete."}'},
}


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.status_code} {response.text}"
    return response.json()


class Market:
    """Accounts and tasks for one test, made over HTTP with the server's admin."""

    def __init__(self, admin: Admin) -> None:
        self.admin = admin

    def account(self, role: str) -> Account:
        """Like ``Admin.account`` but without a password: API keys only, and no slow password hashing."""
        email = f"{role}-{uuid.uuid4().hex[:12]}@example.com"
        user = ok(self.admin.http.post("/v1/admin/users", json={"email": email, "role": role}))
        scopes = OPERATOR_SCOPES + ROLE_EXTRA[role]
        key = ok(self.admin.http.post(f"/v1/admin/users/{user['id']}/api-keys",
                                      json={"kind": "user", "scopes": scopes}))
        return Account(self.admin.base_url, user, key["key"], scopes)

    def publisher(self, funds: float = 0) -> Account:
        account = self.account("publisher")
        if funds:
            self.credit(account, funds)
        return account

    def reviewer(self) -> Account:
        return self.account("reviewer")

    def operator(self) -> Account:
        return self.account("operator")

    def bot_keys(self, count: int, operator: Account | None = None) -> list[str]:
        """Keys of ``count`` new bots of one operator (no client per bot: they are slow to build)."""
        operator = operator or self.operator()
        keys = []
        for _ in range(count):
            created = operator.http.post("/v1/agent/bots", json={"name": f"bot-{uuid.uuid4().hex[:8]}"})
            assert created.status_code == 201, created.text
            bot = created.json()
            keys.append(ok(operator.http.post("/v1/profile/api-keys", json={
                "kind": "bot", "botId": bot["id"],
                "scopes": ["tasks:read", "tasks:claim", "claims:read", "claims:submit"]}))["key"])
        return keys

    def credit(self, account: Account, amount: float) -> None:
        ok(self.admin.http.post("/v1/admin/credit", json={"email": account.user["email"], "amount": str(amount)}))

    def ledger_check(self) -> dict[str, Any]:
        result: dict[str, Any] = ok(self.admin.http.get("/v1/admin/ledger/check"))
        return result

    @staticmethod
    def balance(account: Account) -> float:
        return float(ok(account.http.get("/v1/profile/balance"))["balance"])

    @staticmethod
    def draft(publisher: Account, module: str = "fun", bounty: float = 10, **fields: Any) -> dict[str, Any]:
        body = {"module": module, "title": f"{module} task", "description": "Do the thing.",
                "bountyAmount": bounty, **MODULE_FIELDS[module], **fields}
        task: dict[str, Any] = ok(publisher.http.post("/v1/tasks", json=body))
        assert task["status"] == "draft"
        return task

    def task(self, publisher: Account, module: str = "fun", bounty: float = 10, **fields: Any) -> dict[str, Any]:
        draft = self.draft(publisher, module, bounty, **fields)
        published: dict[str, Any] = ok(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"))
        assert published["status"] == "published"
        return published


def claim(bot: Bot | Account, task_id: str) -> str:
    created = ok(bot.http.post(f"/v1/agent/tasks/{task_id}/claim"))
    assert set(created) == {"claimId", "taskId", "status", "nextAction", "expiresAt"}
    assert created["status"] == "active" and created["nextAction"] == "submit"
    return str(created["claimId"])


def status(holder: Bot | Account, claim_id: str) -> dict[str, Any]:
    result: dict[str, Any] = ok(holder.http.get(f"/v1/agent/claims/{claim_id}/status"))
    return result


def task_of(publisher: Account, task_id: str) -> dict[str, Any]:
    result: dict[str, Any] = ok(publisher.http.get(f"/v1/tasks/{task_id}"))
    return result


def submit(holder: Bot | Account, claim_id: str, body: dict[str, Any]) -> dict[str, Any]:
    receipt: dict[str, Any] = ok(holder.http.post(f"/v1/agent/claims/{claim_id}/submit", json=body))
    assert set(receipt) == {"submissionId", "claimId", "status", "reviewState", "submittedAt", "nextAction",
                            "contentSha256", "checks", "attempt"}
    return receipt


def eventually(probe: Callable[[], Any], expected: Any, timeout: float = 30.0) -> None:
    """Wait until ``probe()`` returns ``expected`` (a periodic sweep acts in the background)."""
    deadline = time.monotonic() + timeout
    while (value := probe()) != expected:
        assert time.monotonic() < deadline, f"still {value!r}, expected {expected!r}"
        time.sleep(0.1)


@contextlib.contextmanager
def private_market(backend: str, data_dir: Path, env: dict[str, str | None]) -> Iterator[tuple[LiveServer, Market]]:
    """A server of the test module's own (its settings, a fresh database) and a Market of its admin."""
    with database_url(backend, data_dir) as url, LiveServer(data_dir, url, env=env) as live:
        key = live.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
        yield live, Market(Admin(live.base_url, key))
