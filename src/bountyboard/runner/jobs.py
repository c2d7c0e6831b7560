"""``bench run ./<slug>``: run an agent on pulled tasks locally and write a Harbor job directory.

Each trial (one attempt of one task) gets ``<job>/<task>__<id>/`` with ``config.json``, the agent's
files under ``agent/``, ``verifier/reward.txt`` and, once it is over, ``result.json``. The job's
``result.json`` is written when the job starts, rewritten at most every
``JOB_RESULT_INTERVAL_SECONDS`` while trials finish, and at the end, so an interrupted job is
readable at any time.
Running the same job name again resumes it: finished trials are kept, unfinished ones are
discarded and run again, and only the missing attempts run.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import tomllib
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bountyboard import __version__, clock
from bountyboard.client.exceptions import BountyboardError
from bountyboard.runner import verifiers
from bountyboard.runner.adapters import read_manifest
from bountyboard.runner.agents import Agent, AgentError, AgentSpec, TaskInput
from bountyboard.runner.harbor import (
    JOB_TAG_FILE,
    AgentInfo,
    AgentResult,
    ExceptionInfo,
    JobDir,
    JobResult,
    JobTag,
    ModelInfo,
    TaskId,
    TimingInfo,
    TrialResult,
    VerifierResult,
    default_job_name,
    dump,
    eval_key,
    job_lock,
    job_stats,
    new_trial_name,
    read_job_dir,
    task_digest,
    trial_lock,
    write_json,
)

# Rewriting the job's result after every trial would cost more than a short trial itself.
JOB_RESULT_INTERVAL_SECONDS = 1.0


class JobError(BountyboardError):
    pass


@dataclass(frozen=True)
class LocalTask:
    name: str  # the directory name
    path: Path
    package: str  # [task] name in task.toml
    instruction: str
    agent_timeout: float
    version: str | None
    digest: str  # Harbor's content digest, sha256:<hex>


@dataclass
class RunOptions:
    tasks_dir: Path
    agent: AgentSpec
    attempts: int = 1
    concurrency: int = 4
    jobs_dir: Path = Path("jobs")
    job_name: str | None = None
    benchmark: str | None = None


def load_tasks(tasks_dir: Path) -> list[LocalTask]:
    """The pulled tasks under ``tasks_dir`` (directories with task.toml and tests/expected.json)."""
    if not tasks_dir.is_dir():
        raise JobError(f"{tasks_dir} is not a directory; pull a benchmark first (bountyboard bench pull)")
    tasks = []
    for child in sorted(tasks_dir.iterdir()):
        if not (child / "task.toml").is_file():
            continue
        if not (child / "tests" / "expected.json").is_file():
            raise JobError(f"{child} has no tests/expected.json: bench run scores pulled tasks only; "
                           "run other Harbor tasks with `harbor run -p`")
        config = tomllib.loads((child / "task.toml").read_text())
        package = config.get("task") or {}
        tasks.append(LocalTask(
            name=child.name, path=child, package=str(package.get("name") or child.name),
            instruction=(child / "instruction.md").read_text(),
            agent_timeout=float((config.get("agent") or {}).get("timeout_sec") or 600.0),
            version=package.get("version"), digest=task_digest(child),
        ))
    if not tasks:
        raise JobError(f"no tasks (directories with task.toml) under {tasks_dir}")
    return tasks


class JobRunner:
    """Runs the missing trials of one job with bounded concurrency."""

    def __init__(self, options: RunOptions, on_trial: Callable[[TrialResult], None] | None = None) -> None:
        options.agent.validate()
        if options.attempts < 1 or options.concurrency < 1:
            raise JobError("attempts and concurrency must be at least 1")
        self.options = options
        self.tasks = load_tasks(options.tasks_dir)
        self.manifest = read_manifest(options.tasks_dir)
        self.benchmark = options.benchmark or (self.manifest.benchmark if self.manifest else None)
        self.job_name = options.job_name or default_job_name(options.agent.name, options.agent.model, clock.now())
        self.job_dir = options.jobs_dir / self.job_name
        self.dataset = options.tasks_dir.resolve().name
        self.key = eval_key(options.agent.name, options.agent.model, self.dataset)
        self.on_trial = on_trial
        self.trials: list[TrialResult] = []
        self.job_id = str(uuid.uuid4())
        self.started_at = clock.now()
        self._queue: list[LocalTask] | None = None
        self._locks: list[dict[str, Any]] = []  # of every trial of the job, for its lock.json
        self._written_at = 0.0

    # -- the job directory ---------------------------------------------------------------------

    def _tag(self) -> JobTag:
        return JobTag(benchmark=self.benchmark, model=self.options.agent.model, agent=self.options.agent.name,
                      harness_version=__version__, tasks_dir=str(self.options.tasks_dir.resolve()),
                      n_attempts=self.options.attempts,
                      manifest=self.manifest.model_dump() if self.manifest else None,
                      dataset_ref=self.manifest.dataset if self.manifest else self.dataset,
                      dataset_revision=self.manifest.revision if self.manifest else None)

    def _config(self) -> dict[str, Any]:
        agent: dict[str, Any] = {"name": self.options.agent.name, "model_name": self.options.agent.model}
        if self.options.agent.name == "openai":
            agent["kwargs"] = {"base_url": self.options.agent.base_url}
        return {"job_name": self.job_name, "jobs_dir": str(self.options.jobs_dir),
                "n_attempts": self.options.attempts, "n_concurrent_trials": self.options.concurrency,
                "agents": [agent], "datasets": [{"path": str(self.options.tasks_dir)}]}

    def _resume(self) -> dict[str, int]:
        """Keep the finished trials of an existing job; return how many each task has."""
        done: dict[str, int] = {}
        if not (self.job_dir / "config.json").is_file():
            return done
        existing: JobDir = read_job_dir(self.job_dir)
        tag = existing.tag
        wanted = self._tag()
        if tag is None or (tag.agent, tag.model, tag.tasks_dir) != (wanted.agent, wanted.model, wanted.tasks_dir):
            raise JobError(f"{self.job_dir} holds another job (agent, model or tasks differ); "
                           "choose another --job-name")
        if existing.result is not None:
            self.job_id = existing.result.id
            self.started_at = existing.result.started_at or self.started_at
        for path in existing.unfinished:
            shutil.rmtree(path)
        by_package = {task.package: task.name for task in self.tasks}
        for trial in existing.finished:
            task = by_package.get(trial.task_name)
            if task is not None:
                self.trials.append(trial)
                lock = self.job_dir / trial.trial_name / "lock.json"
                if lock.is_file():
                    self._locks.append(json.loads(lock.read_text()))
                done[task] = done.get(task, 0) + 1
        return done

    def _write_job_result(self, pending: int, finished: bool) -> None:
        now = clock.now()
        result = JobResult(
            id=self.job_id, started_at=self.started_at, updated_at=now, finished_at=now if finished else None,
            n_total_trials=len(self.trials) + pending, stats=job_stats({self.key: self.trials}, pending),
        )
        write_json(self.job_dir / "result.json", dump(result))
        write_json(self.job_dir / "lock.json", job_lock(
            created_at=self.started_at, n_concurrent_trials=self.options.concurrency, trials=self._locks))
        self._written_at = time.monotonic()

    # -- one trial -----------------------------------------------------------------------------

    def _trial_config(self, task: LocalTask, trial_name: str) -> dict[str, Any]:
        return {
            "task": {"path": str(task.path), "source": self.dataset},
            "trial_name": trial_name,
            "trials_dir": str(self.job_dir),
            "agent": {"name": self.options.agent.name, "model_name": self.options.agent.model},
            "job_id": self.job_id,
        }

    async def _run_trial(self, agent: Agent, task: LocalTask) -> TrialResult:
        trial_name = new_trial_name(task.name)
        trial_dir = self.job_dir / trial_name
        (trial_dir / "agent").mkdir(parents=True)
        (trial_dir / "verifier").mkdir()
        config = self._trial_config(task, trial_name)
        write_json(trial_dir / "config.json", config)
        lock = trial_lock(task_dir=task.path, version=task.version, source=self.dataset,
                          agent=self._config()["agents"][0])
        write_json(trial_dir / "lock.json", lock)
        self._locks.append(lock)
        model = self.options.agent.model
        provider, _, short = model.rpartition("/") if model else ("", "", "")
        result = TrialResult(
            id=str(uuid.uuid4()), task_name=task.package, trial_name=trial_name,
            trial_uri=trial_dir.resolve().as_uri(), task_id=TaskId(path=str(task.path)), source=self.dataset,
            task_checksum=task.digest.removeprefix("sha256:"), config=config,
            agent_info=AgentInfo(name=agent.name, version=agent.version,
                                 model_info=ModelInfo(name=short, provider=provider or None) if model else None),
            started_at=clock.now(),
        )
        try:
            result.agent_execution = TimingInfo(started_at=clock.now())
            try:
                output = await agent.run(TaskInput(task.path, task.instruction, trial_dir / "agent",
                                                   task.agent_timeout))
            finally:
                result.agent_execution.finished_at = clock.now()
            result.agent_result = AgentResult(n_input_tokens=output.n_input_tokens,
                                              n_output_tokens=output.n_output_tokens, cost_usd=output.cost_usd)
            result.verifier = TimingInfo(started_at=clock.now())
            result.verifier_result = self._verify(task, trial_dir, output.answer)
            result.verifier.finished_at = clock.now()
        except AgentError as exc:
            result.exception_info = self._exception(exc.kind, str(exc), trial_dir)
        except Exception as exc:  # a broken task or verifier: recorded on the trial, the job goes on
            result.exception_info = self._exception(type(exc).__name__, str(exc), trial_dir)
        result.finished_at = clock.now()
        write_json(trial_dir / "result.json", dump(result))
        return result

    def _verify(self, task: LocalTask, trial_dir: Path, answer: str | None) -> VerifierResult:
        if answer is not None:
            (trial_dir / "agent" / "answer.txt").write_text(answer)
        expected = json.loads((task.path / "tests" / "expected.json").read_text())
        reward = verifiers.verify(expected, answer or "")
        (trial_dir / "verifier" / "reward.txt").write_text(f"{reward:g}\n")
        return VerifierResult(rewards={"reward": reward})

    @staticmethod
    def _exception(kind: str, message: str, trial_dir: Path) -> ExceptionInfo:
        trace = traceback.format_exc()
        (trial_dir / "exception.txt").write_text(trace)
        return ExceptionInfo(exception_type=kind, exception_message=message, exception_traceback=trace,
                             occurred_at=clock.now())

    # -- the job -------------------------------------------------------------------------------

    def prepare(self) -> list[LocalTask]:
        """The trials still to run (one entry per attempt), after taking over a resumed job."""
        if self._queue is None:
            done = self._resume()
            self._queue = [task for task in self.tasks
                           for _ in range(self.options.attempts - done.get(task.name, 0))]
        return self._queue

    async def run(self) -> list[TrialResult]:
        queue = self.prepare()
        self.job_dir.mkdir(parents=True, exist_ok=True)
        write_json(self.job_dir / "config.json", self._config())
        write_json(self.job_dir / JOB_TAG_FILE, self._tag().model_dump(mode="json"))
        remaining = len(queue)
        self._write_job_result(remaining, finished=not queue)
        agent = self.options.agent.create()
        semaphore = asyncio.Semaphore(self.options.concurrency)

        async def one(task: LocalTask) -> None:
            nonlocal remaining
            async with semaphore:
                trial = await self._run_trial(agent, task)
            self.trials.append(trial)
            remaining -= 1
            if remaining == 0 or time.monotonic() - self._written_at >= JOB_RESULT_INTERVAL_SECONDS:
                self._write_job_result(remaining, finished=remaining == 0)
            if self.on_trial is not None:
                self.on_trial(trial)

        try:
            await asyncio.gather(*(one(task) for task in queue))
        finally:
            await agent.close()
        return self.trials
