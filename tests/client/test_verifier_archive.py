"""A publisher gives a task checks whose verifier is a tests/ directory, through the SDK, against a live
server; the server's runner checks a bot's submissions with it in the sandbox (bubblewrap)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import pytest

from bountyboard.client import ApiError, AsyncClient, Client
from bountyboard.client.archive import pack_tests
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer

pytestmark = pytest.mark.sandbox

# The expected answer lives in a data file of the directory, not in test.sh.
COMPARES_WITH_ITS_DATA = ("#!/bin/bash\nif cmp -s /app/submission/content.txt /tests/data/expected.txt; then r=1; "
                          "else r=0; fi\necho \"compared with $(cat /tests/data/expected.txt)\"\n"
                          "echo $r > /logs/verifier/reward.txt\n")
CHECKS = {"binding": True, "maxAttempts": 3, "rules": [{"kind": "maxLength", "value": 200}],
          "verifier": {"trials": 1, "timeoutSec": 20}, "solution": {"resultType": "text", "content": "forty-two"}}


@pytest.fixture()
def market(admin: Admin) -> Marketplace:
    return Marketplace(admin)


def _tests_dir(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "test.sh").write_text(COMPARES_WITH_ITS_DATA)
    (root / "data" / "expected.txt").write_text("forty-two")
    return root


def _checked(client: Client, claim_id: str, timeout: float = 60.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while (status := client.claim_status(claim_id))["checkState"] in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    return dict(status)


def test_a_task_published_with_a_verifier_directory_checks_submissions(server: LiveServer, market: Marketplace,
                                                                       tmp_path: Path) -> None:
    tests = _tests_dir(tmp_path / "tests")
    with Client(server.base_url, market.publisher.key, state_path=tmp_path / "publisher.json") as publisher:
        task = publisher.publish_task("fun", "Name the answer", "Write it in words.", checks=CHECKS,
                                      verifier_tests=tests)  # the publish's self-test ran the directory's test.sh
    assert task["status"] == "published"
    assert task["checks"]["verifier"]["trials"] == 1 and task["checks"]["binding"]

    with Client(server.base_url, market.bot.key, state_path=tmp_path / "bot.json") as bot:
        claim_id = bot.claim(task["id"])["claimId"]
        bot.submit(claim_id, "text", "42")
        sent_back = _checked(bot, claim_id)
        assert (sent_back["status"], sent_back["checkState"]) == ("active", "failed")
        assert "compared with forty-two" in str(sent_back["checks"])
        bot.submit(claim_id, "text", "forty-two")
        passed = _checked(bot, claim_id)
        assert (passed["status"], passed["checkState"]) == ("submitted", "passed")
    market.review(claim_id)


def test_an_archive_uploaded_to_a_draft_answers_its_key_and_digest(server: LiveServer, market: Marketplace,
                                                                  tmp_path: Path) -> None:
    draft = market.publisher.http.post("/v1/tasks", json={"module": "fun", "title": "A draft"}).json()
    packed = tmp_path / "verifier.tar.gz"
    packed.write_bytes(pack_tests(_tests_dir(tmp_path / "tests")))
    no_script = tmp_path / "empty"
    no_script.mkdir()

    async def upload() -> None:
        async with AsyncClient(server.base_url, market.publisher.key, state_path=tmp_path / "state.json") as client:
            stored = await client.upload_verifier_archive(draft["id"], packed)
            assert stored["taskId"] == draft["id"] and stored["archiveKey"].startswith("vfa_")
            assert (stored["sizeBytes"], stored["sha256"]) == (packed.stat().st_size,
                                                               hashlib.sha256(packed.read_bytes()).hexdigest())
            with pytest.raises(ApiError) as refused:
                await client.upload_verifier_archive(draft["id"], no_script)
            assert refused.value.code == "invalid_task" and "test.sh" in refused.value.detail

    asyncio.run(upload())
