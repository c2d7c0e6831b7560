"""Run by Harbor's own Python (.venv-harbor): validate task and job directories with Harbor's models.

    python harbor_check.py tasks DIR...   every task directory under DIR (task.toml, via harbor's Task)
    python harbor_check.py jobs DIR...    each job directory: config, result, lock, and every trial's,
                                          and what `harbor upload` reads before sending

Prints one JSON object: ``problems`` (empty when Harbor accepts everything) and, per job, the
stats Harbor computes from the trial results themselves (``Mean`` per eval, ``pass@k``), so the
caller can compare them with what the job's result.json claims and with the hub.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from harbor.metrics.mean import Mean
from harbor.models.job.config import JobConfig
from harbor.models.job.lock import JobLock, TrialLock
from harbor.models.job.result import JobResult, JobStats
from harbor.models.task.task import Task
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import TrialResult
from harbor.publisher.packager import Packager
from harbor.upload.uploader import _load_job_from_disk, _read_trial_lock_for_upload
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals
from pydantic import BaseModel

problems: list[str] = []


def validate(model: type[BaseModel], path: Path) -> Any:
    """The model, or None with a problem recorded; keys Harbor's model does not know are problems
    too (Harbor would drop them silently)."""
    try:
        raw = json.loads(path.read_text())
        value = model.model_validate(raw)
    except (OSError, ValueError) as exc:
        problems.append(f"{path}: {exc}")
        return None
    unknown = sorted(set(raw) - set(model.model_fields))
    if unknown:
        problems.append(f"{path}: keys unknown to {model.__name__}: {unknown}")
    return value


def check_tasks(root: Path) -> dict[str, Any]:
    digests = {}
    for task_dir in sorted(path.parent for path in root.glob("*/task.toml")):
        try:
            task = Task(task_dir)
        except Exception as exc:  # any refusal by Harbor is the finding
            problems.append(f"{task_dir}: {type(exc).__name__}: {exc}")
            continue
        digests[task_dir.name] = {"name": task.name, "digest": Packager.compute_content_hash(task_dir)[0]}
    if not digests:
        problems.append(f"{root}: no task directories")
    return digests


def check_upload(job_dir: Path) -> None:
    """What ``harbor upload`` reads before it sends anything: the job's result and config, every
    trial's result, and every trial's lock (required)."""
    try:
        _, _, _, trial_dirs = _load_job_from_disk(job_dir)
        for trial_dir in trial_dirs.values():
            _read_trial_lock_for_upload(trial_dir)
    except Exception as exc:  # any refusal by Harbor is the finding
        problems.append(f"{job_dir}: harbor upload refuses it: {type(exc).__name__}: {exc}")


def check_job(job_dir: Path) -> dict[str, Any]:
    check_upload(job_dir)
    validate(JobConfig, job_dir / "config.json")
    validate(JobLock, job_dir / "lock.json")
    claimed = validate(JobResult, job_dir / "result.json")
    trials: list[TrialResult] = []
    for trial_dir in sorted(path.parent for path in job_dir.glob("*/result.json")):
        validate(TrialConfig, trial_dir / "config.json")
        validate(TrialLock, trial_dir / "lock.json")
        trial = validate(TrialResult, trial_dir / "result.json")
        if trial is not None:
            trials.append(trial)
    # Harbor's own aggregation of these trials, as its Job does at the end of a run.
    stats = JobStats.from_trial_results(trials)
    rewards: dict[str, list[Any]] = defaultdict(list)
    for trial in trials:
        key = JobStats.format_agent_evals_key(
            trial.agent_info.name, trial.agent_info.model_info.name if trial.agent_info.model_info else None,
            trial.source or "adhoc")
        rewards[key].append(trial.verifier_result.rewards if trial.verifier_result else None)
    for key, values in rewards.items():
        stats.evals[key].metrics = [Mean().compute(values)]
    for key, pass_at_k in compute_pass_at_k_by_evals(trials).items():
        stats.evals[key].pass_at_k = pass_at_k
    return {
        "computed": json.loads(stats.model_dump_json())["evals"],
        "claimed": json.loads(claimed.stats.model_dump_json())["evals"] if claimed else None,
    }


def main(kind: str, paths: list[str]) -> None:
    check = check_tasks if kind == "tasks" else check_job
    report = {path: check(Path(path)) for path in paths}
    print(json.dumps({"problems": problems, "report": report}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
