"""Harbor's job directory format, as Pydantic models, and the reader/writer around it.

A job directory (``jobs/<job-name>/``) holds ``config.json``, ``result.json`` (the job result with
``stats.evals``; trial results are not inlined) and one directory per trial (``<task>__<id>/``)
with its own ``config.json``, ``result.json`` and ``verifier/reward.txt`` or ``reward.json``.
The models follow Harbor 0.25's ``models/trial/result.py`` and ``models/job/result.py``: they keep
unknown fields (``extra="allow"``) so that a directory written by Harbor survives a read and a
write unchanged, and they give defaults to everything this tool does not produce itself.

``bountyboard.json`` beside ``config.json`` is this tool's own tag (the benchmark slug, the pulled
manifest); Harbor ignores it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import string
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bountyboard.benchhub import stats

JOB_TAG_FILE = "bountyboard.json"
_NAME_ALPHABET = string.ascii_letters + string.digits


class _HarborModel(BaseModel):
    model_config = ConfigDict(extra="allow")


class TimingInfo(_HarborModel):
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ModelInfo(_HarborModel):
    name: str
    provider: str | None = None


class AgentInfo(_HarborModel):
    name: str
    version: str = "unknown"
    model_info: ModelInfo | None = None


class AgentResult(_HarborModel):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    model_usage: Any = None
    rollout_details: Any = None
    metadata: dict[str, Any] | None = None


class VerifierResult(_HarborModel):
    rewards: dict[str, float | int] | None = None


class ExceptionInfo(_HarborModel):
    exception_type: str
    exception_message: str
    exception_traceback: str = ""
    occurred_at: datetime | None = None


class TaskId(_HarborModel):
    path: str


class TrialResult(_HarborModel):
    """``<trial>/result.json``."""

    id: str
    task_name: str
    trial_name: str
    trial_uri: str = ""
    task_id: TaskId | None = None
    source: str | None = None
    task_checksum: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    agent_info: AgentInfo
    agent_result: AgentResult | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: TimingInfo | None = None
    agent_setup: TimingInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None

    @property
    def is_error(self) -> bool:
        """Harbor counts a trial as errored when it carries an exception."""
        return self.exception_info is not None

    @property
    def model_name(self) -> str | None:
        """The model as it was asked for (``provider/name``), else as the agent reported it."""
        agent = self.config.get("agent") or {}
        if agent.get("model_name"):
            return str(agent["model_name"])
        info = self.agent_info.model_info
        if info is None:
            return None
        return f"{info.provider}/{info.name}" if info.provider else info.name


class EvalStats(_HarborModel):
    """One entry of ``stats.evals``: the trials of one agent, model and dataset."""

    n_trials: int = 0
    n_errors: int = 0
    metrics: list[dict[str, float]] = Field(default_factory=list)
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    reward_stats: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    exception_stats: dict[str, list[str]] = Field(default_factory=dict)


class JobStats(_HarborModel):
    n_completed_trials: int = 0
    n_errored_trials: int = 0
    n_running_trials: int = 0
    n_pending_trials: int = 0
    n_cancelled_trials: int = 0
    n_retries: int = 0
    evals: dict[str, EvalStats] = Field(default_factory=dict)
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class JobResult(_HarborModel):
    """``<job>/result.json``."""

    id: str
    started_at: datetime | None = None
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    n_total_trials: int = 0
    stats: JobStats = Field(default_factory=JobStats)


class JobTag(BaseModel):
    """``<job>/bountyboard.json``: what Harbor's own files do not say about a run."""

    model_config = ConfigDict(extra="allow")

    benchmark: str | None = None
    model: str | None = None
    agent: str | None = None
    harness: str = "bountyboard"
    harness_version: str | None = None
    tasks_dir: str | None = None
    n_attempts: int = 1
    manifest: dict[str, Any] | None = None
    dataset_ref: str | None = None
    dataset_revision: str | None = None


class TrialDir(BaseModel):
    """One trial directory as found on disk; ``result`` is None when the trial never finished."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    result: TrialResult | None


class JobDir(BaseModel):
    """A job directory as found on disk."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: dict[str, Any]
    result: JobResult | None
    lock: dict[str, Any] | None
    tag: JobTag | None
    trials: list[TrialDir]

    @property
    def name(self) -> str:
        return str(self.config.get("job_name") or self.path.name)

    @property
    def finished(self) -> list[TrialResult]:
        return [trial.result for trial in self.trials if trial.result is not None]

    @property
    def unfinished(self) -> list[Path]:
        return [trial.path for trial in self.trials if trial.result is None]


# Harbor's task digest (``Packager.compute_content_hash``): these files and directories of a task,
# less the default ignores (a task with its own .gitignore is not hashed the same).
_DIGEST_FILES = ("task.toml", "instruction.md", "README.md")
_DIGEST_DIRS = ("environment", "tests", "solution", "steps")
_DIGEST_IGNORED_SUFFIXES = (".pyc", ".swp", ".swo", "~", ".DS_Store")


def task_digest(task_dir: Path) -> str:
    """``sha256:<hex>`` over ``<relative path>\\0<file sha256>\\n`` of the task's files, as Harbor
    records it in ``lock.json`` (``harbor upload`` keys tasks by it)."""
    files = [task_dir / name for name in _DIGEST_FILES if (task_dir / name).is_file()]
    for name in _DIGEST_DIRS:
        files += [path for path in (task_dir / name).rglob("*") if path.is_file()
                  and "__pycache__" not in path.parts and not path.name.endswith(_DIGEST_IGNORED_SUFFIXES)]
    outer = hashlib.sha256()
    for path in sorted(files, key=lambda path: path.relative_to(task_dir).as_posix()):
        inner = hashlib.sha256(path.read_bytes()).hexdigest()
        outer.update(f"{path.relative_to(task_dir).as_posix()}\0{inner}\n".encode())
    return f"sha256:{outer.hexdigest()}"


def trial_lock(*, task_dir: Path, version: str | None, source: str, agent: dict[str, Any]) -> dict[str, Any]:
    """``<trial>/lock.json`` (Harbor's ``TrialLock``), which ``harbor upload`` requires of every trial."""
    return {
        "schema_version": 2,
        "task": {"name": task_dir.name, "version": version, "type": "local", "digest": task_digest(task_dir),
                 "source": source, "path": str(task_dir)},
        "agent": agent,
        "environment": {},
        "verifier": {},
    }


def job_lock(*, created_at: datetime, n_concurrent_trials: int, trials: list[dict[str, Any]]) -> dict[str, Any]:
    """``<job>/lock.json`` (Harbor's ``JobLock``): the trials' locks; no Harbor version, since Harbor
    did not run the job."""
    return {"schema_version": 3, "created_at": created_at.isoformat(), "harbor": {},
            "n_concurrent_trials": n_concurrent_trials, "retry": {"max_retries": 0}, "trials": trials}


def default_job_name(agent: str, model: str | None, now: datetime) -> str:
    """``<date>__<time>__<agent>[__<model>]``: Harbor's timestamp name, plus what makes two runs of
    one minute differ (a job of another model is another job, never a resumed one)."""
    parts = [now.strftime("%Y-%m-%d__%H-%M-%S"), agent]
    if model:
        parts.append(model.split("/")[-1])
    return "__".join(re.sub(r"[^A-Za-z0-9._-]+", "-", part) for part in parts)


def new_trial_name(task_name: str) -> str:
    """``<task>__<7 random characters>``, as Harbor names trial directories."""
    return f"{task_name[:32]}__{''.join(secrets.choice(_NAME_ALPHABET) for _ in range(7))}"


def write_json(path: Path, data: Any) -> None:
    """Write atomically, so an interrupted job never leaves half a result behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=4) + "\n")
    os.replace(tmp, path)


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def is_job_dir(path: Path) -> bool:
    config = _read_json(path / "config.json")
    # A trial directory has the same files; its config names the trial.
    return isinstance(config, dict) and "trial_name" not in config and any(
        (path / name).is_file() for name in ("result.json", "lock.json", JOB_TAG_FILE))


def find_job_dirs(root: Path) -> list[Path]:
    """``root`` itself when it is a job directory, else the job directories directly under it."""
    if is_job_dir(root):
        return [root]
    return sorted(child for child in root.iterdir() if child.is_dir() and is_job_dir(child))


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def read_job_dir(path: Path) -> JobDir:
    result = _read_json(path / "result.json")
    tag = _read_json(path / JOB_TAG_FILE)
    trials = []
    for child in sorted(path.iterdir()):
        # Trial directories are the ones with a config.json; agent logs and the like are not.
        if not child.is_dir() or not (child / "config.json").is_file():
            continue
        raw = _read_json(child / "result.json")
        trials.append(TrialDir(path=child, result=TrialResult.model_validate(raw) if raw is not None else None))
    return JobDir(
        path=path,
        config=_read_json(path / "config.json") or {},
        result=JobResult.model_validate(result) if result is not None else None,
        lock=_read_json(path / "lock.json"),
        tag=JobTag.model_validate(tag) if tag is not None else None,
        trials=trials,
    )


def eval_key(agent: str, model: str | None, dataset: str) -> str:
    """The key of ``stats.evals``: ``<agent>__<model name without provider>__<dataset>``."""
    parts = [agent]
    if model:
        parts.append(model.split("/")[-1])
    parts.append(dataset)
    return "__".join(part.replace("/", "-") for part in parts)


def trial_rows(trials: list[TrialResult]) -> list[stats.TrialRow]:
    """Trials as the shared counting functions take them: (task, rewards or None, error)."""
    return [
        (trial.task_name,
         trial.verifier_result.rewards if trial.verifier_result is not None else None,
         trial.exception_info.exception_type if trial.exception_info is not None else None)
        for trial in trials
    ]


def eval_stats(trials: list[TrialResult]) -> EvalStats:
    """One entry of ``stats.evals``, counted as Harbor counts (:mod:`bountyboard.benchhub.stats`):
    ``n_trials`` the trials with rewards, ``n_errors`` those with an exception, a mean per reward key
    over every trial (``mean`` alone when there is one key) and ``pass_at_k``."""
    result = EvalStats()
    reward_stats: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    exception_stats: dict[str, list[str]] = defaultdict(list)
    for trial in trials:
        if trial.verifier_result is not None and trial.verifier_result.rewards is not None:
            result.n_trials += 1
            for key, value in trial.verifier_result.rewards.items():
                reward_stats[key][str(value)].append(trial.trial_name)
        if trial.exception_info is not None:
            result.n_errors += 1
            exception_stats[trial.exception_info.exception_type].append(trial.trial_name)
    rows = trial_rows(trials)
    result.metrics = [stats.as_harbor_metric(stats.harbor_metrics(rows))] if rows else []
    result.pass_at_k = stats.pass_at_k(rows)
    result.reward_stats = {key: dict(values) for key, values in reward_stats.items()}
    result.exception_stats = dict(exception_stats)
    return result


def headline(trials: list[TrialResult], *, registry_key: str | None = None,
             override: str | None = None) -> tuple[str, float]:
    """The primary reward key and its mean: the number ``bench run`` prints and the hub stores as
    ``score`` (the same rule, :func:`bountyboard.benchhub.stats.primary_key`)."""
    rows = trial_rows(trials)
    metrics = stats.harbor_metrics(rows)
    key = stats.primary_key(stats.reward_keys(rewards for _, rewards, _ in rows),
                            registry_key=registry_key, override=override)
    return key, metrics.get(key, 0.0)


def _sum_or_none(values: list[int | float | None]) -> Any:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def job_stats(groups: dict[str, list[TrialResult]], n_pending: int = 0) -> JobStats:
    trials = [trial for group in groups.values() for trial in group]
    agent_results = [trial.agent_result or AgentResult() for trial in trials]
    return JobStats(
        n_completed_trials=len(trials),
        n_errored_trials=sum(1 for trial in trials if trial.is_error),
        n_pending_trials=n_pending,
        evals={key: eval_stats(group) for key, group in groups.items()},
        n_input_tokens=_sum_or_none([r.n_input_tokens for r in agent_results]),
        n_cache_tokens=_sum_or_none([r.n_cache_tokens for r in agent_results]),
        n_output_tokens=_sum_or_none([r.n_output_tokens for r in agent_results]),
        cost_usd=_sum_or_none([r.cost_usd for r in agent_results]),
    )
