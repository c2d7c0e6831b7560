"""Run payloads and small helpers shared by the benchmark-hub tests."""

from __future__ import annotations

import copy
import hashlib
import uuid
from typing import Any

import httpx

from bountyboard.benchhub import registry
from tests.support.api import ALL_SCOPES, Admin
from tests.support.server import ADMIN_EMAIL, LiveServer


def trial(task_id: str, reward: float | None, *, attempt: int = 0, error: str | None = None,
          rewards: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "taskId": task_id, "trialName": f"{task_id}__{attempt}",
        "rewards": rewards if rewards is not None else (None if reward is None else {"reward": reward}),
        "error": error, "startedAt": "2026-11-01T10:00:00Z", "finishedAt": "2026-11-01T10:00:05Z",
        "tokens": {"input": 120, "output": 40}, "costUsd": 0.001,
    }


def payload(benchmark: str = "gsm8k", model: str = "test-model", rewards: list[float] | None = None, *,
            trials: list[dict[str, Any]] | None = None, claim: dict[str, Any] | None = None,
            bundle: str | None = None, agent: str = "terminus-2") -> dict[str, Any]:
    """A run upload; by default one trial per reward, one task each."""
    if trials is None:
        trials = [trial(f"task-{index}", value) for index, value in enumerate(rewards or [1.0, 0.0])]
    return {
        "benchmark": benchmark, "model": model, "agent": {"name": agent, "version": "1.0"},
        "harness": {"name": "bountyboard", "version": "0.1.0"}, "dataset": {"ref": "openai/gsm8k", "revision": "main"},
        "trials": trials, "claim": claim,
        "bundleSha256": hashlib.sha256((bundle or uuid.uuid4().hex).encode()).hexdigest(),
    }


def claim_by_another(admin: Admin, slug: str, model: str, claim: dict[str, Any]) -> None:
    """A claim carried by a one-trial upload of a fresh account, so that other accounts' runs are
    independent of it (docs/benchhub.md, "Independence")."""
    response = admin.account().http.post("/v1/runs", json=payload(slug, model, [1.0], claim=claim,
                                                                   agent="claimant-agent"))
    assert response.status_code == 200, response.text


def admin_of(server: LiveServer) -> Admin:
    key = server.cli("admin", "create-key", ADMIN_EMAIL, "--scopes", ",".join(ALL_SCOPES)).strip()
    return Admin(server.base_url, key)



def anonymous(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, timeout=30)


def custom_benchmark(admin: Admin, **overrides: Any) -> dict[str, Any]:
    """A fresh hf_rows record added through the admin route (copied from arc-easy: tolerance 0.02)."""
    record = copy.deepcopy(next(r for r in registry.shipped_records() if r["slug"] == "arc-easy"))
    record.update({"slug": f"test-{uuid.uuid4().hex[:10]}", "name": "Test benchmark", "referenceScores": [],
                   **overrides})
    response = admin.http.put(f"/v1/admin/bench/benchmarks/{record['slug']}", json=record)
    assert response.status_code == 200, response.text
    return record
