"""A Harbor-style verifier run of one submission, in the sandbox, with its receipt.

Layout inside the sandbox (as Harbor's verifiers expect): the bundle read-only at ``/app/tests`` (and
``/tests``), the submission read-only at ``/app/submission``, a fresh writable ``/app`` and
``/logs/verifier`` per trial; the command is ``bash tests/test.sh`` in ``/app``. A trial's reward is
``/logs/verifier/reward.txt`` (one number) or ``reward.json`` (``reward`` is the primary key; a
single key is taken whatever its name); a trial that wrote neither counts 0, as Harbor counts it.
Reward files are opened without following links (the sandbox owns that directory).

The check ``passed`` when the mean reward reaches ``passThreshold``, else ``failed``; it is an
``error`` when a trial hit its time or output limit or the sandbox could not be set up (the trials
after it are not run, so a check ends within one trial's limit of its last start).
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bountyboard.benchhub.stats import Estimate, MetricRange, Moments, TaskTally
from bountyboard.checks import bundle
from bountyboard.checks.sandbox import Limits, Mount, Outcome, Sandbox, SandboxResult

RECEIPT_VERSION = 1
EXCERPT_CHARS = 2000
MAX_REWARD_FILE_BYTES = 64 * 1024
COMMAND = ("bash", "tests/test.sh")
Status = Literal["passed", "failed", "error"]


class VerifierSpec(BaseModel):
    """A task's ``checks.verifier`` (DESIGN.md section 13)."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] | None = Field(default=None, description="Inline bundle: paths under tests/.")
    archiveKey: str | None = Field(default=None, min_length=1, max_length=500,
                                   description="An uploaded .tar.gz of a tests/ directory.")
    trials: int = Field(default=1, ge=1, le=20)
    timeoutSec: float = Field(default=60.0, gt=0, le=1800)
    passThreshold: float = 1.0

    @model_validator(mode="after")
    def _one_bundle(self) -> VerifierSpec:
        if (self.files is None) == (self.archiveKey is None):
            raise ValueError("give the verifier's tests either inline (files) or as an archive (archiveKey)")
        return self


class Runner(Protocol):
    """What runs one trial: the sandbox, or (perf/ only) a bare process for comparison."""

    async def run(self, command: list[str] | tuple[str, ...], *, mounts: list[Mount], cwd: str,
                  limits: Limits) -> SandboxResult: ...


@dataclass
class Trial:
    reward: float | None
    outcome: Outcome
    exit_code: int | None
    duration_ms: int
    output: str
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"reward": self.reward, "outcome": self.outcome.value, "exitCode": self.exit_code,
                "durationMs": self.duration_ms, "error": self.error}


@dataclass
class VerifierResult:
    status: Status
    spec: VerifierSpec
    trials: list[Trial]
    bundle_sha256: str
    submission_sha256: str
    duration_ms: int
    environment: dict[str, Any]
    error: str | None = None
    rewards: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.rewards = [trial.reward if trial.reward is not None else 0.0 for trial in self.trials]

    @property
    def mean_reward(self) -> float | None:
        return math.fsum(self.rewards) / len(self.rewards) if self.rewards else None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% interval of the mean reward (the hub's Jeffreys interval, each trial its own unit)."""
        if not self.rewards:
            return None
        tally = TaskTally()
        for index, reward in enumerate(self.rewards):
            tally.add(f"trial-{index}", reward, 1)
        metric = MetricRange(min(0.0, *self.rewards), max(1.0, *self.rewards))
        binary = all(reward in (metric.low, metric.high) for reward in self.rewards)
        return Estimate.of(Moments.of(tally), metric, binary).ci95

    @property
    def output_excerpt(self) -> str:
        """The end of the output of the trial that decided: the first in error, else the last."""
        deciding = next((t for t in self.trials if t.error), self.trials[-1] if self.trials else None)
        if deciding is None:
            return self.error or ""
        text = deciding.output if not deciding.error else f"{deciding.output}\n[{deciding.error}]".lstrip()
        return text[-EXCERPT_CHARS:]

    def as_json(self) -> dict[str, Any]:
        """The ``verifier`` member of a submission's ``checks`` (DESIGN.md section 13)."""
        interval = self.interval
        return {
            "status": self.status, "trials": len(self.trials), "rewards": self.rewards,
            "meanReward": self.mean_reward,
            "interval": {"low": interval[0], "high": interval[1]} if interval else None,
            "passThreshold": self.spec.passThreshold, "passed": self.passed, "durationMs": self.duration_ms,
            "outputExcerpt": self.output_excerpt, "bundleSha256": self.bundle_sha256,
            "submissionSha256": self.submission_sha256, "error": self.error,
        }

    def receipt(self) -> dict[str, Any]:
        """What ``bountyboard checks replay`` needs to rerun this check and say whether it agrees."""
        return {
            "version": RECEIPT_VERSION, "bundleSha256": self.bundle_sha256,
            "submissionSha256": self.submission_sha256,
            "verifier": {"trials": self.spec.trials, "timeoutSec": self.spec.timeoutSec,
                         "passThreshold": self.spec.passThreshold},
            "environment": self.environment, "trials": [trial.as_json() for trial in self.trials],
            "rewards": self.rewards, "meanReward": self.mean_reward, "status": self.status,
        }


def compare_receipts(recorded: Mapping[str, Any], replayed: Mapping[str, Any]) -> dict[str, Any]:
    """Whether a replay agrees with a recorded receipt: same inputs, same status. Rewards that differ
    are listed (a verifier with randomness may legitimately move them within the interval)."""
    differences = []
    for key in ("bundleSha256", "submissionSha256", "status"):
        if recorded.get(key) != replayed.get(key):
            differences.append({"field": key, "recorded": recorded.get(key), "replayed": replayed.get(key)})
    if recorded.get("rewards") != replayed.get("rewards"):
        differences.append({"field": "rewards", "recorded": recorded.get("rewards"),
                            "replayed": replayed.get("rewards")})
    same_inputs = not any(d["field"] in ("bundleSha256", "submissionSha256") for d in differences)
    return {"agrees": same_inputs and recorded.get("status") == replayed.get("status"),
            "sameInputs": same_inputs, "differences": differences}


@cache
def environment(sandbox_name: str = "bubblewrap") -> dict[str, Any]:
    """Where checks run: enough to tell a replay on another machine from one on this one."""
    version = None
    if sandbox_name == "bubblewrap" and shutil.which("bwrap"):
        answer = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=10, check=False)
        version = answer.stdout.strip() or None
    os_name = None
    if Path("/etc/os-release").is_file():
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    return {"sandbox": version or sandbox_name, "os": os_name, "kernel": platform.release(),
            "machine": platform.machine(), "command": " ".join(COMMAND)}


def _read_reward(logs: Path) -> tuple[float | None, str | None]:
    """The trial's reward, read without following links; (None, why) when there is none."""
    try:
        logs_fd = os.open(logs, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None, "no /logs directory"
    try:
        try:
            dir_fd = os.open("verifier", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=logs_fd)
        except OSError:
            return None, "no /logs/verifier directory"
        try:
            for name in ("reward.txt", "reward.json"):
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                except OSError:
                    continue
                with os.fdopen(fd, "rb") as reward_file:
                    if not stat.S_ISREG(os.fstat(reward_file.fileno()).st_mode):
                        return None, f"{name} is not a regular file"
                    text = reward_file.read(MAX_REWARD_FILE_BYTES + 1).decode(errors="replace")
                if len(text) > MAX_REWARD_FILE_BYTES:
                    return None, f"{name} is larger than {MAX_REWARD_FILE_BYTES} bytes"
                return _parse_reward(name, text)
            return None, "the verifier wrote no reward.txt or reward.json"
        finally:
            os.close(dir_fd)
    finally:
        os.close(logs_fd)


def _parse_reward(name: str, text: str) -> tuple[float | None, str | None]:
    try:
        if name == "reward.txt":
            value = float(text.strip())
        else:
            document = json.loads(text)
            if not isinstance(document, dict):
                return None, "reward.json is not an object"
            if "reward" in document:
                value = float(document["reward"])
            elif len(document) == 1:
                value = float(next(iter(document.values())))
            else:
                return None, "reward.json has several keys and no 'reward'"
    except (ValueError, TypeError):
        return None, f"{name} holds no number"
    if not math.isfinite(value):
        return None, f"{name} holds no finite number"
    return value, None


class Workspace:
    """A private host directory for one verifier run: the bundle, the submission and one directory per
    trial, removed afterwards. Readable by the sandbox's uid; writable only where a trial writes."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bb-check-"))
        os.chmod(self.root, 0o711)  # the sandbox's uid may pass through it to its mounts, not list it
        self.tests = self.root / "tests"
        self.submission = self.root / "submission"

    def trial(self, index: int) -> tuple[Path, Path]:
        base = self.root / f"trial-{index}"
        app, logs = base / "app", base / "logs"
        for directory in (base, app, logs, logs / "verifier"):
            directory.mkdir(mode=0o755)
        for mount_point in ("tests", "submission"):
            (app / mount_point).mkdir(mode=0o755)
        return app, logs

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _trial_of(result: SandboxResult, logs: Path, timeout_sec: float) -> Trial:
    output = result.output.decode(errors="replace")
    if result.outcome is Outcome.ERROR:
        return Trial(None, result.outcome, None, result.duration_ms, output, result.error)
    if result.outcome is Outcome.TIMEOUT:
        return Trial(None, result.outcome, None, result.duration_ms, output,
                     f"killed at the time limit ({timeout_sec:g} s)")
    if result.outcome is Outcome.OUTPUT_LIMIT:
        return Trial(None, result.outcome, None, result.duration_ms, output,
                     f"stopped: its output passed {len(result.output)} bytes")
    reward, why = _read_reward(logs)
    if why:
        output = f"{output}\n[{why}]".lstrip()
    return Trial(reward, result.outcome, result.exit_code, result.duration_ms, output)


async def run_verifier(spec: VerifierSpec, submission: Mapping[str, Any], *,
                       archive: bytes | None = None, attachments: Mapping[str, bytes] | None = None,
                       sandbox: Runner | None = None, limits: Limits | None = None) -> VerifierResult:
    """Run ``spec`` on ``submission`` (the body as submitted) ``spec.trials`` times.

    ``archive`` is the bytes of ``spec.archiveKey`` and ``attachments`` the bytes of each attachment by
    file name, both fetched by the caller. A bundle or submission that cannot be laid out, like a
    sandbox that cannot be set up, gives an ``error`` result, never an exception.
    """
    runner: Runner = sandbox or Sandbox()
    limits = limits or Limits()
    limits = Limits(**{**limits.__dict__, "timeout_sec": spec.timeoutSec})
    started = time.monotonic()
    workspace = Workspace()
    env = environment("bubblewrap" if isinstance(runner, Sandbox) else type(runner).__name__)
    bundle_sha = submission_sha = ""
    try:
        try:
            if spec.files is not None:
                bundle.write_inline(spec.files, workspace.tests)
            else:
                bundle.extract_archive(archive or b"", workspace.tests)
            bundle_sha = bundle.tree_sha256(workspace.tests)
            bundle.write_submission(submission, attachments or {}, workspace.submission)
            submission_sha = bundle.tree_sha256(workspace.submission)
        except bundle.BundleError as exc:
            return VerifierResult("error", spec, [], bundle_sha, submission_sha,
                                  int((time.monotonic() - started) * 1000), env, str(exc))
        trials: list[Trial] = []
        for index in range(spec.trials):
            app, logs = workspace.trial(index)
            mounts = [Mount(app, "/app", writable=True), Mount(workspace.tests, "/app/tests"),
                      Mount(workspace.tests, "/tests"), Mount(workspace.submission, "/app/submission"),
                      Mount(logs, "/logs", writable=True)]
            result = await runner.run(list(COMMAND), mounts=mounts, cwd="/app", limits=limits)
            trials.append(_trial_of(result, logs, spec.timeoutSec))
            if trials[-1].error:
                break
        duration_ms = int((time.monotonic() - started) * 1000)
        failed = next((trial for trial in trials if trial.error), None)
        if failed is not None:
            return VerifierResult("error", spec, trials, bundle_sha, submission_sha, duration_ms, env, failed.error)
        mean = math.fsum(t.reward or 0.0 for t in trials) / len(trials)
        status: Status = "passed" if mean >= spec.passThreshold else "failed"
        return VerifierResult(status, spec, trials, bundle_sha, submission_sha, duration_ms, env)
    finally:
        workspace.close()


@dataclass
class SelfTest:
    """The publish-time calibration: the reference solution must pass, an empty submission must fail."""

    passed: bool
    failing_case: Literal["reference_solution", "empty_submission"] | None
    reference: VerifierResult
    empty: VerifierResult | None

    def problem_detail(self) -> str | None:
        """What a 422 ``checks_self_test_failed`` says (None when the self-test passed)."""
        if self.passed:
            return None
        result = self.reference if self.failing_case == "reference_solution" else self.empty
        assert result is not None
        expected = "pass" if self.failing_case == "reference_solution" else "fail"
        case = "the reference solution" if self.failing_case == "reference_solution" else "an empty submission"
        return (f"The verifier must {expected} {case}, but it ended {result.status} "
                f"(mean reward {result.mean_reward}). Its output ends: {result.output_excerpt[-500:]}")


async def self_test(spec: VerifierSpec, solution: Mapping[str, Any], *, archive: bytes | None = None,
                    attachments: Mapping[str, bytes] | None = None, sandbox: Runner | None = None,
                    limits: Limits | None = None) -> SelfTest:
    reference = await run_verifier(spec, solution, archive=archive, attachments=attachments,
                                   sandbox=sandbox, limits=limits)
    if reference.status != "passed":
        return SelfTest(False, "reference_solution", reference, None)
    empty_body = {"resultType": solution.get("resultType", "text"), "content": "", "attachments": []}
    empty = await run_verifier(spec, empty_body, archive=archive, sandbox=sandbox, limits=limits)
    if empty.status != "failed":
        return SelfTest(False, "empty_submission", reference, empty)
    return SelfTest(True, None, reference, empty)
