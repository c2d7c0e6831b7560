"""``bountyboard publish --checks FILE.json --verifier-tests DIR`` against a live server, whose self-test
runs the directory's test.sh in the sandbox (bubblewrap) before publishing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.client.loop import Marketplace, cli_env, run_cli
from tests.support.api import Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.sandbox


def test_publish_with_checks_and_a_verifier_directory(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                      tmp_path: Path) -> None:
    live, _ = loop_server
    env = cli_env(live.base_url, market.publisher.key, tmp_path)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text("#!/bin/bash\ngrep -qx ok /app/submission/content.txt && r=1 || r=0\n"
                                   "echo $r > /logs/verifier/reward.txt\n")
    checks = tmp_path / "checks.json"
    checks.write_text(json.dumps({"binding": False, "verifier": {"trials": 2, "timeoutSec": 20},
                                  "solution": {"resultType": "text", "content": "ok"}}))
    # Not a fun task: the worker tests on this server only take fun tasks.
    args = ("publish", "arena", "Say ok", "--checks", str(checks), "--verifier-tests", str(tests), "--json")

    published = run_cli(*args, env=env)
    assert published.returncode == 0, published.stderr
    task = json.loads(published.stdout)
    assert task["status"] == "published" and task["checks"]["verifier"]["trials"] == 2
    assert not task["checks"]["binding"]

    # Refused before any request: the tests without the checks' settings and solution, or the verifier twice.
    alone = run_cli(*args[:3], "--verifier-tests", str(tests), env=env)
    assert alone.returncode == 2 and "needs --checks" in alone.stderr
    checks.write_text(json.dumps({"verifier": {"files": {"test.sh": "exit 0"}}}))
    twice = run_cli(*args, env=env)
    assert twice.returncode == 2 and "inline" in twice.stderr
    drafts = market.publisher.http.get("/v1/tasks", params={"status": "draft"}).json()["data"]
    assert drafts == []
