"""A verifier run in the sandbox (checks/verifier.py): trials, rewards, the pass rule, receipts, self-test."""

from __future__ import annotations

import io
import tarfile

from bountyboard.checks.sandbox import Sandbox
from bountyboard.checks.verifier import VerifierSpec, compare_receipts, run_verifier, self_test

# Passes a submission whose content holds 42 and whose attachment answer.csv holds "a,b".
CHECK_42 = """#!/bin/bash
set -u
mkdir -p /logs/verifier
if grep -q 42 /app/submission/content.txt && grep -q '"resultType": "text"' /app/submission/submission.json; then
  echo "found 42"; echo 1 > /logs/verifier/reward.txt
else
  echo "expected 42, got: $(cat /app/submission/content.txt)"; echo 0 > /logs/verifier/reward.txt
fi
"""


def body(content: str) -> dict[str, object]:
    return {"resultType": "text", "content": content, "attachments": []}


async def test_a_right_and_a_wrong_submission(sandbox: Sandbox) -> None:
    spec = VerifierSpec(files={"test.sh": CHECK_42}, trials=2, timeoutSec=30)
    right = await run_verifier(spec, body("It is 42."), sandbox=sandbox)
    assert right.status == "passed", right.as_json()
    shown = right.as_json()
    assert shown["rewards"] == [1.0, 1.0] and shown["meanReward"] == 1.0 and shown["trials"] == 2
    assert shown["interval"]["high"] == 1.0 and 0 < shown["interval"]["low"] < 1
    assert shown["outputExcerpt"] == "found 42\n"
    wrong = await run_verifier(spec, body("It is 41."), sandbox=sandbox)
    assert wrong.status == "failed"
    assert "expected 42, got: It is 41." in wrong.output_excerpt
    assert wrong.as_json()["interval"]["low"] == 0.0
    assert wrong.bundle_sha256 == right.bundle_sha256 and wrong.submission_sha256 != right.submission_sha256


async def test_reward_json_attachments_and_a_threshold(sandbox: Sandbox) -> None:
    script = """#!/bin/bash
    n=$(wc -l < /app/submission/attachments/rows.csv)
    python3 -c "import json; json.dump({'reward': $n / 4, 'rows': $n}, open('/logs/verifier/reward.json', 'w'))"
    """
    spec = VerifierSpec(files={"test.sh": script}, passThreshold=0.5)
    half = await run_verifier(spec, body(""), attachments={"rows.csv": b"a\nb\n"}, sandbox=sandbox)
    assert (half.status, half.rewards) == ("passed", [0.5])
    quarter = await run_verifier(spec, body(""), attachments={"rows.csv": b"a\n"}, sandbox=sandbox)
    assert (quarter.status, quarter.rewards) == ("failed", [0.25])


async def test_an_archived_bundle_runs_like_the_inline_one(sandbox: Sandbox) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("tests/test.sh")
        info.size, info.mode = len(CHECK_42.encode()), 0o755
        tar.addfile(info, io.BytesIO(CHECK_42.encode()))
    archived = await run_verifier(VerifierSpec(archiveKey="upl_x"), body("42"), archive=out.getvalue(),
                                  sandbox=sandbox)
    inline = await run_verifier(VerifierSpec(files={"test.sh": CHECK_42}), body("42"), sandbox=sandbox)
    assert archived.status == inline.status == "passed"
    assert compare_receipts(inline.receipt(), archived.receipt()) == {
        "agrees": True, "sameInputs": True, "differences": []}


async def test_no_reward_counts_zero_and_a_bad_bundle_is_an_error(sandbox: Sandbox) -> None:
    silent = await run_verifier(VerifierSpec(files={"test.sh": "echo nothing"}), body("x"), sandbox=sandbox)
    assert (silent.status, silent.rewards) == ("failed", [0.0])
    assert "wrote no reward.txt" in silent.output_excerpt
    broken = await run_verifier(VerifierSpec(files={"run.sh": "x"}), body("x"), sandbox=sandbox)
    assert broken.status == "error" and broken.trials == [] and "no tests/test.sh" in (broken.error or "")


async def test_the_receipt_replays(sandbox: Sandbox) -> None:
    spec = VerifierSpec(files={"test.sh": CHECK_42})
    first = (await run_verifier(spec, body("42"), sandbox=sandbox)).receipt()
    again = (await run_verifier(spec, body("42"), sandbox=sandbox)).receipt()
    assert compare_receipts(first, again)["agrees"]
    assert first["environment"]["sandbox"].startswith("bubblewrap")
    assert [trial["reward"] for trial in first["trials"]] == [1.0]
    other = (await run_verifier(spec, body("43"), sandbox=sandbox)).receipt()
    verdict = compare_receipts(first, other)
    assert not verdict["agrees"] and not verdict["sameInputs"]
    assert {d["field"] for d in verdict["differences"]} == {"submissionSha256", "status", "rewards"}


async def test_self_test_names_the_failing_case(sandbox: Sandbox) -> None:
    solution = body("The answer is 42.")
    good = await self_test(VerifierSpec(files={"test.sh": CHECK_42}), solution, sandbox=sandbox)
    assert good.passed and good.failing_case is None and good.problem_detail() is None
    lenient = await self_test(VerifierSpec(files={"test.sh": "echo ok; echo 1 > /logs/verifier/reward.txt"}),
                              solution, sandbox=sandbox)
    assert (lenient.passed, lenient.failing_case) == (False, "empty_submission")
    assert "must fail an empty submission" in (lenient.problem_detail() or "")
    strict = await self_test(VerifierSpec(files={"test.sh": CHECK_42.replace("42", "43")}), solution,
                             sandbox=sandbox)
    assert (strict.passed, strict.failing_case) == (False, "reference_solution")
    assert "expected 43, got: The answer is 42." in (strict.problem_detail() or "")
