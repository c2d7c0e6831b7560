"""Checks before review over HTTP against a live server (issue 26, DESIGN.md section 13): a binding
verifier sends wrong work back, an advisory one only informs the reviewer, an arena is ranked by the
verifier's reward, and a verifier that fails its self-test cannot be published. The server's own
runner runs the checks in the sandbox (bubblewrap), as in production."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
from typing import Any

import pytest

from tests.files.support import upload
from tests.market.support import Market, claim, expect_problem, ok, status, submit
from tests.support.api import Account, Bot
from tests.support.server import LiveServer

pytestmark = pytest.mark.sandbox

# Right when the content is the line "42"; says what it got otherwise.
ANSWER_42 = """#!/bin/bash
if grep -qx '42' /app/submission/content.txt; then
  echo "the answer is right"; echo 1 > /logs/verifier/reward.txt
else
  echo "expected 42, got: $(head -c 80 /app/submission/content.txt)"; echo 0 > /logs/verifier/reward.txt
fi
"""
# The reward is what follows "#r=" in the content (an arena's entrant scores itself, for the test).
REWARD_IN_URL = "#!/bin/bash\nsed -n 's/.*#r=//p' /app/submission/content.txt > /logs/verifier/reward.txt\n"


def _checks(script: str, *, binding: bool, solution: str, trials: int = 2, threshold: float = 1.0,
            **extra: Any) -> dict[str, Any]:
    return {"binding": binding, "maxAttempts": 3,
            "rules": [{"kind": "maxLength", "value": 200}],
            "verifier": {"files": {"test.sh": script}, "trials": trials, "timeoutSec": 20,
                         "passThreshold": threshold},
            "solution": {"resultType": "text", "content": solution}, **extra}


def _checked(holder: Bot | Account, claim_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """The claim's status once its latest submission's checks ended."""
    deadline = time.monotonic() + timeout
    while (current := status(holder, claim_id))["checkState"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"checks still {current['checkState']}"
        time.sleep(0.2)
    return current


def _events(holder: Bot | Account) -> list[dict[str, Any]]:
    return list(ok(holder.http.get("/v1/agent/events", params={"types": "claim.checked"}))["data"])


def test_binding_verifier_sends_wrong_work_back_then_passes(market: Market, server: LiveServer) -> None:
    publisher, reviewer = market.publisher(funds=20), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=20, checks=_checks(ANSWER_42, binding=True, solution="42"))
    assert task["checks"]["binding"] and "files" not in task["checks"]["verifier"]
    assert "solution" not in task["checks"]
    claim_id = claim(bot, task["id"])

    receipt = submit(bot, claim_id, {"resultType": "text", "content": "41"})
    assert receipt["checks"]["status"] == "queued" and receipt["nextAction"] == "wait_for_checks"
    expect_problem(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}),
                   409, "checks_pending")
    sent_back = _checked(bot, claim_id)
    assert sent_back["status"] == "active" and sent_back["checkState"] == "failed"
    assert sent_back["nextAction"] == "fix_and_resubmit" and sent_back["attemptsLeft"] == 2
    assert "expected 42, got: 41" in sent_back["checks"]["verifier"]["outputExcerpt"]
    assert sent_back["checks"]["verifier"]["rewards"] == [0.0, 0.0]

    second = submit(bot, claim_id, {"resultType": "text", "content": "42"})
    assert second["attempt"] == 2 and second["submissionId"] != receipt["submissionId"]
    passed = _checked(bot, claim_id)
    assert passed["status"] == "submitted" and passed["checkState"] == "passed"
    assert passed["nextAction"] == "wait_for_review" and passed["attemptsLeft"] == 1

    queue = ok(reviewer.http.get("/v1/review/queue", params={"checks": "passed"}))
    item = next(entry for entry in queue["data"] if entry["id"] == claim_id)
    verifier = item["checks"]["verifier"]
    assert verifier["meanReward"] == 1.0 and verifier["trials"] == 2
    assert 0 < verifier["interval"]["low"] < 1 and verifier["interval"]["high"] == 1
    assert [s["checks"]["status"] for s in item["submissionHistory"]] == ["failed", "passed"]
    assert claim_id not in [e["id"] for e in ok(reviewer.http.get(
        "/v1/review/queue", params={"checks": "failed"}))["data"]]

    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept", "comment": "verified"}))
    assert market.balance(bot.operator) == 20 and market.balance(publisher) == 0
    assert [e["data"]["checks"]["status"] for e in _events(bot)] == ["failed", "passed"]
    assert market.ledger_check()["balanced"]

    # Each recorded check reruns from its receipt and agrees (same bundle and submission hashes, same status).
    for receipt_of in (receipt, second):
        replayed = server.run_cli("checks", "replay", receipt_of["submissionId"])
        assert replayed.returncode == 0, replayed.stderr
        report = json.loads(replayed.stdout)
        assert report["agrees"] and report["sameInputs"] and report["differences"] == []
    unknown = server.run_cli("checks", "replay", "sub_unknown")
    assert unknown.returncode == 1 and "no finished check run" in unknown.stderr


def test_advisory_verifier_only_informs_the_reviewer(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=10), market.reviewer()
    bot = market.operator().bot()
    task = market.task(publisher, "fun", bounty=10, checks=_checks(ANSWER_42, binding=False, solution="42"))
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, {"resultType": "text", "content": "forty-two"})

    checked = _checked(bot, claim_id)
    assert checked["status"] == "submitted" and checked["checkState"] == "failed"
    assert checked["nextAction"] == "wait_for_review" and checked["checks"]["binding"] is False
    failed = ok(reviewer.http.get("/v1/review/queue", params={"checks": "failed"}))
    assert claim_id in [entry["id"] for entry in failed["data"]]
    # The reviewer reads the verifier's complaint and accepts anyway: advisory checks decide nothing.
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept", "comment": "close enough"}))
    assert market.balance(bot.operator) == 10 and market.balance(publisher) == 0
    assert market.ledger_check()["balanced"]


def test_arena_ranked_by_verifier_reward(market: Market) -> None:
    publisher, reviewer = market.publisher(funds=100), market.reviewer()
    bots = [market.operator().bot() for _ in range(3)]
    checks = _checks(REWARD_IN_URL, binding=False, solution="https://github.com/x/y#r=1", trials=1, threshold=0.5)
    checks["solution"]["resultType"] = "github_url"
    task = market.task(publisher, "arena", bounty=100, checks=checks)
    claims = [claim(bot, task["id"]) for bot in bots]
    for bot, claim_id, reward in zip(bots, claims, ("0.6", "0.9", "0.3"), strict=True):
        submit(bot, claim_id, {"resultType": "github_url", "content": f"https://github.com/x/y#r={reward}"})
    scores = [_checked(bot, claim_id)["score"] for bot, claim_id in zip(bots, claims, strict=True)]
    assert scores == [0.6, 0.9, 0.3]

    ordered = ok(reviewer.http.get("/v1/review/queue", params={"order": "checks", "module": "arena"}))["data"]
    mine = [entry["id"] for entry in ordered if entry["taskId"] == task["id"]]
    assert mine.index(claims[2]) > max(mine.index(claims[0]), mine.index(claims[1]))  # the one below threshold last
    ok(reviewer.http.post(f"/v1/review/claims/{claims[0]}", json={"decision": "accept"}))
    ok(reviewer.http.post(f"/v1/review/claims/{claims[1]}", json={"decision": "accept"}))
    ok(reviewer.http.post(f"/v1/review/claims/{claims[2]}", json={"decision": "accept", "score": 0.1}))  # overridden
    ok(publisher.http.post(f"/v1/tasks/{task['id']}/close"))
    assert [status(bot, claim_id)["rank"] for bot, claim_id in zip(bots, claims, strict=True)] == [2, 1, 3]
    assert market.balance(bots[1].operator) == 70 and market.balance(bots[0].operator) == 30
    assert market.ledger_check()["balanced"]


@pytest.mark.parametrize(("script", "case"), [
    ("#!/bin/bash\necho 'no luck'; echo 0 > /logs/verifier/reward.txt\n", "reference_solution"),
    ("#!/bin/bash\necho 'anything goes'; echo 1 > /logs/verifier/reward.txt\n", "empty_submission"),
])
def test_publish_refused_when_the_verifier_fails_its_self_test(market: Market, script: str, case: str) -> None:
    publisher = market.publisher(funds=5)
    draft = market.draft(publisher, "fun", bounty=5, checks=_checks(script, binding=True, solution="42", trials=1))
    problem = expect_problem(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"), 422, "checks_self_test_failed")
    assert problem["case"] == case
    assert ("no luck" if case == "reference_solution" else "anything goes") in problem["outputExcerpt"]
    assert ok(publisher.http.get(f"/v1/tasks/{draft['id']}"))["status"] == "draft"
    assert market.balance(publisher) == 5


def test_bad_checks_are_refused_on_the_draft(market: Market) -> None:
    publisher = market.publisher()
    body = {"module": "fun", "title": "checked", "description": "x", "bountyAmount": 1}
    for checks, says in [
        ({"rules": [{"kind": "regex", "value": "("}]}, "not a valid regular expression"),
        ({"verifier": {"files": {"test.sh": "exit 0"}}}, "needs the reference solution"),
        ({"rules": []}, "give rules, a verifier, or both"),
        (_checks(ANSWER_42, binding=True, solution="42", trials=20) | {
            "verifier": {"files": {"test.sh": "exit 0"}, "trials": 20, "timeoutSec": 1800}}, "must stay within"),
    ]:
        problem = expect_problem(publisher.http.post("/v1/tasks", json={**body, "checks": checks}), 422)
        assert says in str(problem), problem
    draft = market.draft(publisher, "fun", bounty=1)
    edited = ok(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"checks": {"rules": [
        {"kind": "contains", "value": "Answer:"}]}}))
    assert edited["checks"] == {"binding": True, "maxAttempts": 3, "verifier": None,
                                "rules": [{"kind": "contains", "value": "Answer:"}]}


ATTACHED_42 = """#!/bin/bash
ls /app/submission/attachments
if grep -qx '42' /app/submission/attachments/answer.txt 2>/dev/null; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""


def test_the_verifier_reads_the_uploaded_attachments(market: Market, server: LiveServer) -> None:
    publisher = market.publisher(funds=3)
    checks = _checks(ATTACHED_42, binding=True, solution="", trials=1)
    draft = market.draft(publisher, "fun", bounty=3, checks=checks)
    # The reference solution carries no file, so this verifier cannot pass it: publishing is refused.
    refused = expect_problem(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"), 422, "checks_self_test_failed")
    assert refused["case"] == "reference_solution"
    ok(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"checks": _checks(
        ATTACHED_42.replace("r=0; fi", "r=0; fi\ngrep -qx 'see file' /app/submission/content.txt && r=1"),
        binding=True, solution="see file", trials=1)}))
    task = ok(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"))
    bot = market.operator().bot()
    claim_id = claim(bot, task["id"])
    uploaded = upload(bot.http, claim_id, "answer.txt", "text/plain", b"42\n")
    submit(bot, claim_id, {"resultType": "text", "content": "the answer is attached", "attachments": [
        {"type": "text", "fileKey": uploaded["fileKey"]}]})
    checked = _checked(bot, claim_id)
    assert checked["checkState"] == "passed", checked["checks"]
    assert "answer.txt" in checked["checks"]["verifier"]["outputExcerpt"]
    replayed = server.run_cli("checks", "replay", checked["submissionId"])  # the same file's bytes again
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["sameInputs"], replayed.stdout


def test_a_binding_failure_on_the_last_attempt_rejects_the_claim(market: Market) -> None:
    publisher = market.publisher(funds=4)
    checks = _checks(ANSWER_42, binding=True, solution="42", trials=1) | {"maxAttempts": 1}
    task = market.task(publisher, "fun", bounty=4, checks=checks)
    bot = market.operator().bot()
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, {"resultType": "text", "content": "41"})
    rejected = _checked(bot, claim_id)
    assert (rejected["status"], rejected["checkState"], rejected["attemptsLeft"]) == ("rejected", "failed", 0)
    assert rejected["nextAction"] == "appeal_or_done" and rejected["appealDeadline"]
    assert "no attempt left" in rejected["reviewComment"]
    expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={"resultType": "text", "content": "42"}),
                   409)
    assert market.balance(bot.operator) == 0


def _tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


# The verifier's data file travels in the archive: the answer it expects is not in test.sh.
READS_ITS_DATA = "#!/bin/bash\nif cmp -s /app/submission/content.txt /tests/expected.txt; then r=1; else r=0; fi\n" \
                 "echo \"compared with $(cat /tests/expected.txt)\"; echo $r > /logs/verifier/reward.txt\n"


def test_a_verifier_given_as_an_uploaded_archive(market: Market, server: LiveServer) -> None:
    publisher, reviewer = market.publisher(funds=4), market.reviewer()
    archive = _tar_gz({"tests/test.sh": READS_ITS_DATA.encode(), "tests/expected.txt": b"forty-two"})
    checks = _checks("", binding=True, solution="forty-two", trials=1)
    draft = market.draft(publisher, "fun", bounty=4, checks={k: v for k, v in checks.items() if k != "verifier"})
    put = f"/v1/tasks/{draft['id']}/verifier-archive"
    raw = {"Content-Type": "application/octet-stream"}

    # Refused, each changing nothing: not an archive, an entry outside tests/, another's draft, an unknown key.
    expect_problem(publisher.http.put(put, content=b"not gzip", headers=raw), 422, "invalid_task")
    outside = expect_problem(publisher.http.put(put, content=_tar_gz({"tests/test.sh": b"", "etc/x": b""}),
                                                headers=raw), 422, "invalid_task")
    assert "under tests/" in outside["detail"]
    expect_problem(market.publisher().http.put(put, content=archive, headers=raw), 404)  # a draft is its own
    verifier = {"archiveKey": "vfa_01jd2k3m4n5p6q7r8s9t0v1w2x", "trials": 1, "timeoutSec": 20}
    unknown = expect_problem(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"checks": {
        **checks, "verifier": verifier}}), 422, "invalid_task")
    assert "checks.verifier.archiveKey" in str(unknown)

    stored = ok(publisher.http.put(put, content=archive, headers=raw))
    assert stored["taskId"] == draft["id"] and stored["sizeBytes"] == len(archive)
    assert stored["sha256"] == hashlib.sha256(archive).hexdigest()
    ok(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"checks": {
        **checks, "verifier": {**verifier, "archiveKey": stored["archiveKey"]}}}))
    task = ok(publisher.http.post(f"/v1/tasks/{draft['id']}/publish"))  # the self-test ran the archive's tests
    expect_problem(publisher.http.put(put, content=archive, headers=raw), 409)  # published: fixed

    bot = market.operator().bot()
    claim_id = claim(bot, task["id"])
    submit(bot, claim_id, {"resultType": "text", "content": "42"})
    sent_back = _checked(bot, claim_id)
    assert sent_back["status"] == "active", sent_back
    assert "compared with forty-two" in sent_back["checks"]["verifier"]["outputExcerpt"]
    second = submit(bot, claim_id, {"resultType": "text", "content": "forty-two"})
    assert _checked(bot, claim_id)["checkState"] == "passed"
    replayed = server.run_cli("checks", "replay", second["submissionId"])
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["agrees"], replayed.stderr
    ok(reviewer.http.post(f"/v1/review/claims/{claim_id}", json={"decision": "accept"}))
    assert market.balance(bot.operator) == 4 and market.ledger_check()["balanced"]
