"""A task's ``checks`` (DESIGN.md section 13) and one check of a submission against them.

``ChecksSpec`` is what a publisher sets on a draft; :func:`run_checks` evaluates the rules and, when
they pass, runs the verifier in the sandbox, giving the ``checks`` member of a submission and the
verifier's receipt. The verifier is not run on work the rules already refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bountyboard.checks import rules as rule_checks
from bountyboard.checks.verifier import Runner, SelfTest, VerifierSpec, run_verifier, self_test

CheckStatus = Literal["passed", "failed", "error"]


class SolutionBody(BaseModel):
    """The publisher's reference solution: a submission body the verifier must pass."""

    model_config = ConfigDict(extra="forbid")

    resultType: str = Field(min_length=1, max_length=20)
    content: str | None = Field(default=None, max_length=1_000_000)


class ChecksSpec(BaseModel):
    """``{"binding", "maxAttempts", "rules", "verifier", "solution"}``; a verifier needs a solution."""

    model_config = ConfigDict(extra="forbid")

    binding: bool = Field(default=True, description="A failing check sends the work back to the agent.")
    maxAttempts: int = Field(default=3, ge=1, le=20, description="Submissions a claim may make.")
    rules: list[dict[str, Any]] = Field(default_factory=list, max_length=rule_checks.MAX_RULES)
    verifier: VerifierSpec | None = None
    solution: SolutionBody | None = None

    @field_validator("rules")
    @classmethod
    def _valid_rules(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rule_checks.parse_rules(value)
        return value

    @model_validator(mode="after")
    def _verifier_has_solution(self) -> ChecksSpec:
        if self.verifier is not None and self.solution is None:
            raise ValueError("a verifier needs the reference solution it must pass (solution)")
        if not self.rules and self.verifier is None:
            raise ValueError("give rules, a verifier, or both")
        return self


@dataclass
class CheckResult:
    status: CheckStatus
    checks: dict[str, Any]
    receipt: dict[str, Any] | None


async def run_checks(spec: ChecksSpec, submission: Mapping[str, Any], *, attachments: Mapping[str, bytes] | None = None,
                     archive: bytes | None = None, sandbox: Runner | None = None) -> CheckResult:
    """The rules, then (if they pass) the verifier, on ``submission`` (the body as submitted) and
    ``attachments`` (the bytes of its uploaded files by file name); ``archive`` is the bytes the
    verifier's ``archiveKey`` names."""
    rule_results = rule_checks.evaluate(rule_checks.parse_rules(spec.rules), submission)
    checks: dict[str, Any] = {"binding": spec.binding, "rules": rule_results, "verifier": None}
    if not rule_checks.passed(rule_results):
        return CheckResult("failed", {"status": "failed", **checks}, None)
    if spec.verifier is None:
        return CheckResult("passed", {"status": "passed", **checks}, None)
    result = await run_verifier(spec.verifier, submission, attachments=attachments, archive=archive, sandbox=sandbox)
    checks["verifier"] = result.as_json()
    return CheckResult(result.status, {"status": result.status, **checks}, result.receipt())


async def calibrate(spec: ChecksSpec, *, archive: bytes | None = None,
                    sandbox: Runner | None = None) -> SelfTest | None:
    """The publish-time self-test of the verifier (None without one)."""
    if spec.verifier is None or spec.solution is None:
        return None
    return await self_test(spec.verifier, {**spec.solution.model_dump(), "attachments": []}, archive=archive,
                           sandbox=sandbox)
