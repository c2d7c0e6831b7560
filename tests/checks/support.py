"""Verifier bundles for the checks' tests: a test.sh that runs the submitted artifact."""

from __future__ import annotations

from typing import Any

from bountyboard.checks.sandbox import Sandbox
from bountyboard.checks.verifier import VerifierResult, VerifierSpec, run_verifier

# Runs the submission's content as a bash script (the "artifact"), then scores 1 when the artifact
# printed PASS, so an attack that works shows in both the output and the reward.
RUN_ARTIFACT = """#!/bin/bash
mkdir -p /logs/verifier
bash /app/submission/content.txt > /app/out.txt 2>&1
status=$?
cat /app/out.txt
if grep -q PASS /app/out.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit $status
"""


def artifact(script: str) -> dict[str, Any]:
    return {"resultType": "text", "content": script, "attachments": []}


async def run_artifact(sandbox: Sandbox, script: str, *, timeout_sec: float = 30, trials: int = 1
                       ) -> VerifierResult:
    spec = VerifierSpec(files={"test.sh": RUN_ARTIFACT}, trials=trials, timeoutSec=timeout_sec)
    return await run_verifier(spec, artifact(script), sandbox=sandbox)
