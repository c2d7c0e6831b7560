"""``bench push``: job directories to ``POST /v1/runs`` payloads.

A job written by ``bench run`` names its benchmark in ``bountyboard.json``; for a job written by
Harbor the benchmark is read from what ``bench pull`` wrote beside the tasks it ran (the dataset's
``manifest.json``, else a task's ``task.toml``), and ``--benchmark`` names it otherwise. The pulled
manifest also gives the dataset's revision, the sample's seed and the ids of the rows the trials
ran. Each eval of a job becomes one run: the trials of one agent, model and dataset (Harbor's
``stats.evals`` key; the trial's ``source`` names its dataset).
Trials without ``result.json`` (the job was interrupted) are skipped and reported. A trial whose
verifier gave no reward is sent without rewards and with an ``error`` that says why: the hub counts
it in ``nErrors`` and as 0 for every key, as Harbor does. A verifier's empty reward (``{}``) is sent
as it is, without an error: Harbor counts it in ``n_trials``, as 0, and gives that eval no pass@k.

``bundleSha256`` is the sha256 of the payload itself (canonical JSON, without that field): pushing
the same job twice sends the same bundle, which the hub answers as a duplicate.

A 429 is not retried: a spent upload quota lasts until its window ends (up to a day), so
:class:`QuotaExceeded` reports the limit and when it resets instead.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from bountyboard import clock
from bountyboard.benchhub.schemas import RunUpload
from bountyboard.client.exceptions import BountyboardError
from bountyboard.client.transport import ApiError, Transport
from bountyboard.runner import imports
from bountyboard.runner.adapters import Manifest, read_manifest
from bountyboard.runner.harbor import JobDir, TrialResult, find_job_dirs, read_job_dir

NO_REWARD = "NoReward: the verifier finished without writing a reward"


class PushError(BountyboardError):
    pass


@dataclass
class PreparedRun:
    """One run to upload, or the reason it cannot be."""

    job: Path
    payload: RunUpload | None = None
    skipped: list[str] = field(default_factory=list)
    problem: str | None = None

    @property
    def label(self) -> str:
        if self.payload is None:
            return self.job.name
        return f"{self.job.name} ({self.payload.model}, dataset {self.payload.dataset.ref})"


def bundle_sha256(payload: dict[str, Any]) -> str:
    body = {key: value for key, value in payload.items() if key != "bundleSha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _trial_payload(trial: TrialResult) -> dict[str, Any]:
    rewards = trial.verifier_result.rewards if trial.verifier_result is not None else None
    if trial.exception_info is not None:
        error: str | None = f"{trial.exception_info.exception_type}: {trial.exception_info.exception_message}"
    else:
        error = NO_REWARD if rewards is None else None
    agent = trial.agent_result
    tokens = None
    if agent is not None and agent.n_input_tokens is not None and agent.n_output_tokens is not None:
        tokens = {"input": agent.n_input_tokens, "output": agent.n_output_tokens}
    return {
        "taskId": trial.task_name,
        "trialName": trial.trial_name,
        "rewards": rewards,
        "error": error[:10_000] if error else None,
        "startedAt": trial.started_at,
        "finishedAt": trial.finished_at,
        "tokens": tokens,
        "costUsd": agent.cost_usd if agent is not None else None,
    }


def _harness(job: JobDir) -> dict[str, str]:
    # Harbor records its version in lock.json; this tool in its tag.
    harbor = (job.lock or {}).get("harbor") or {}
    name = job.tag.harness if job.tag is not None else "harbor"
    version = (job.tag.harness_version if job.tag is not None else None) or harbor.get("version") or ""
    return {"name": name, "version": str(version)}


def _task_dirs(job: JobDir, trials: list[TrialResult]) -> list[Path]:
    """Where the job's tasks were, as Harbor recorded them (relative paths are relative to where
    harbor ran, usually the parent of the jobs directory)."""
    found: dict[Path, None] = {}  # in order, each once: many trials share a task
    for trial in trials:
        path = (trial.config.get("task") or {}).get("path") or (trial.task_id.path if trial.task_id else None)
        if path:
            found.update({Path(path): None, job.path.parent.parent / path: None})
    return list(found)


def pulled_manifest(job: JobDir, trials: list[TrialResult]) -> Manifest | None:
    """The manifest ``bench pull`` wrote for the tasks of this job, if they came from it."""
    if job.tag is not None and job.tag.manifest:
        return Manifest.model_validate(job.tag.manifest)
    for tasks_dir in dict.fromkeys(task_dir.parent for task_dir in _task_dirs(job, trials)):
        try:
            manifest = read_manifest(tasks_dir)
        except (OSError, ValueError):
            continue
        if manifest is not None:
            return manifest
    return None


def _benchmark_of_tasks(job: JobDir, trials: list[TrialResult]) -> str | None:
    """``[metadata] benchmark`` of a task.toml that ``bench pull`` wrote."""
    for task_dir in _task_dirs(job, trials):
        try:
            metadata = tomllib.loads((task_dir / "task.toml").read_text()).get("metadata") or {}
        except (OSError, ValueError):
            continue
        if metadata.get("benchmark"):
            return str(metadata["benchmark"])
    return None


def _dataset(job: JobDir, trials: list[TrialResult], manifest: Manifest | None) -> dict[str, Any]:
    if manifest is not None:
        # The rows these trials ran (a Harbor run may have filtered the pulled tasks).
        row_of_task = dict(zip(manifest.tasks, manifest.rowIds, strict=False))
        ran = {trial.task_name.rsplit("/", 1)[-1] for trial in trials}
        return {"ref": manifest.dataset, "revision": manifest.revision, "seed": manifest.seed,
                "rowIds": [row_of_task[task] for task in manifest.tasks if task in ran]}
    if job.tag is not None and job.tag.dataset_ref:
        return {"ref": job.tag.dataset_ref, "revision": job.tag.dataset_revision}
    # Harbor's job config names its datasets by local path, or by registry name and version; the
    # trials' source is the dataset's name (a local path's last part).
    source = trials[0].source
    for dataset in job.config.get("datasets") or []:
        if not isinstance(dataset, dict):
            continue
        if dataset.get("name") and (source is None or dataset["name"] == source):
            return {"ref": str(dataset["name"]), "revision": dataset.get("version")}
        name = Path(str(dataset.get("path") or "")).name
        if name and (source is None or name == source):
            return {"ref": name, "revision": None}
    return {"ref": source or job.name, "revision": None}


def describe_validation_error(exc: ValidationError) -> str:
    """The problems on one line, ``where: what``, without pydantic's input dump and links."""
    parts = []
    for error in exc.errors():
        # A validator's own message, without pydantic's "Value error, " in front.
        message = str(error["ctx"]["error"]) if error["type"] == "value_error" and "ctx" in error else error["msg"]
        where = ".".join(map(str, error["loc"]))
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def prepare(root: Path, *, benchmark: str | None = None, model: str | None = None,
            claim: dict[str, Any] | None = None, metric: str | None = None) -> list[PreparedRun]:
    """Read every job directory under ``root`` and build its payloads (nothing is sent)."""
    if not root.exists():
        raise PushError(f"{root} does not exist")
    kind = imports.detect(root)
    if kind is not None:
        if metric is not None:
            raise PushError(f"--metric does not apply to {kind} files: the harness's own metric is counted")
        return _prepare_import(root, kind, benchmark=benchmark, model=model, claim=claim)
    jobs = find_job_dirs(root)
    if not jobs:
        raise PushError(f"no job directories (with config.json and result.json) under {root}")
    prepared: list[PreparedRun] = []
    for path in jobs:
        job = read_job_dir(path)
        skipped = [trial.name for trial in job.unfinished]
        # One run per eval, as Harbor's stats.evals: (agent, model, dataset).
        groups: dict[tuple[str, str | None, str | None], list[TrialResult]] = defaultdict(list)
        for trial in job.finished:
            groups[(trial.agent_info.name, trial.model_name, trial.source)].append(trial)
        if not groups:
            prepared.append(PreparedRun(path, skipped=skipped, problem="no finished trial to upload"))
            continue
        for (agent_name, trial_model, _), trials in sorted(groups.items(), key=lambda item: str(item[0])):
            trials.sort(key=lambda trial: trial.trial_name)
            manifest = pulled_manifest(job, trials)
            slug = (benchmark or (job.tag.benchmark if job.tag else None)
                    or (manifest.benchmark if manifest else None) or _benchmark_of_tasks(job, trials))
            if not slug:
                prepared.append(PreparedRun(path, skipped=skipped, problem=(
                    "this job does not name its benchmark and its tasks were not pulled by bench pull: "
                    "pass --benchmark SLUG")))
                continue
            body: dict[str, Any] = {
                "benchmark": slug,
                # An agent without a model (oracle, nop in Harbor's own tests) is reported under its name.
                "model": model or trial_model or (job.tag.model if job.tag else None) or agent_name,
                "agent": {"name": agent_name, "version": trials[0].agent_info.version},
                "harness": _harness(job),
                "dataset": _dataset(job, trials, manifest),
                "trials": [_trial_payload(trial) for trial in trials],
                "claim": claim,
            }
            if metric is not None:
                body["primaryMetric"] = metric
            prepared.append(_prepared(path, body, skipped))
    return prepared


def _prepared(path: Path, body: dict[str, Any], skipped: list[str]) -> PreparedRun:
    try:
        payload = RunUpload.model_validate({**body, "bundleSha256": "0" * 64})
    except ValidationError as exc:
        return PreparedRun(path, skipped=skipped, problem=f"cannot upload: {describe_validation_error(exc)}")
    # Hash the payload as it goes on the wire, so the digest does not depend on how it was read.
    digest = bundle_sha256(payload.model_dump(mode="json", exclude_none=True))
    return PreparedRun(path, payload=payload.model_copy(update={"bundleSha256": digest}), skipped=skipped)


def _prepare_import(path: Path, kind: str, *, benchmark: str | None, model: str | None,
                    claim: dict[str, Any] | None) -> list[PreparedRun]:
    """The runs of another harness's file (:mod:`.imports`)."""
    try:
        found = imports.read(path, kind, benchmark=benchmark)
    except imports.ImportRefused as exc:
        raise PushError(str(exc)) from exc
    return [_prepared(path, {**run.body, "claim": claim, **({"model": model} if model else {})}, []) for run in found]


def payload_json(run: PreparedRun) -> dict[str, Any]:
    assert run.payload is not None
    return run.payload.model_dump(mode="json", exclude_none=True)


class QuotaExceeded(PushError):
    """The hub answered 429: the upload quota of this key or address is spent until ``reset_at``."""

    def __init__(self, error: ApiError, now: datetime) -> None:
        problem = error.problem
        self.limit = problem.get("limit")
        self.window_seconds = problem.get("windowSeconds")
        self.retry_after = int(problem.get("retryAfter") or 0)
        self.reset_at = now + timedelta(seconds=self.retry_after)
        limit = "the upload limit"
        if self.limit is not None and self.window_seconds:
            limit = f"{self.limit} upload{'' if self.limit == 1 else 's'} per {_duration(int(self.window_seconds))}"
        super().__init__(f"{limit} reached ({error.detail}); it resets in {_duration(self.retry_after)}, "
                         f"at {self.reset_at:%Y-%m-%d %H:%M:%S} UTC. Push again then, or with an API key "
                         "of a higher limit (--api-key)")


def _duration(seconds: int) -> str:
    """``24 h``, ``5 h 12 min``, ``3 min 20 s``, ``40 s``."""
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class UploadTransport(Transport):
    """The client's transport, less the retries of 429: a spent quota is reported at once."""

    def retry_delay(self, attempt: int, response: httpx.Response | None) -> float | None:
        if response is not None and response.status_code == 429:
            return None
        return super().retry_delay(attempt, response)


def upload(transport: Transport, run: PreparedRun) -> dict[str, Any]:
    """``POST /v1/runs``. The transport retries with one idempotency key; a bundle pushed again later
    is recognised by the hub and answered with ``"duplicate": true``. Raises :class:`QuotaExceeded`."""
    try:
        response = transport.request("POST", "/v1/runs", json=payload_json(run))
    except ApiError as exc:
        if exc.status == 429:
            raise QuotaExceeded(exc, clock.now()) from exc
        raise
    answer: dict[str, Any] = response.json()
    return answer
