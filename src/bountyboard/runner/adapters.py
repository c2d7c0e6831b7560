"""``bench pull``: turn a benchmark's rows into Harbor task directories.

For an ``hf_rows`` benchmark the rows come from the ``datasets`` library (the record's dataset,
config, split and revision), ``n`` of them sampled deterministically by ``seed``. Each row becomes
``<out>/<task>/`` in Harbor's task format:

- ``task.toml`` and ``instruction.md`` (the question; the answer goes to ``/app/answer.txt``),
- ``environment/Dockerfile`` (a Python image, since the verifier is a Python script),
- ``tests/test.sh``, ``tests/verify.py`` (:mod:`bountyboard.runner.verifiers`, copied verbatim) and
  ``tests/expected.json`` (target, choices, verifier),
- ``solution/solve.sh``, which writes the expected answer (Harbor's ``oracle`` agent runs it).

``<out>/manifest.json`` records where the rows came from: dataset, revision, split, seed and row ids.
Harbor can run the directory as it is (``harbor run -p <out>``); ``bench run`` runs it without Docker.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from bountyboard import __version__, clock
from bountyboard.client.exceptions import BountyboardError
from bountyboard.runner import verifiers
from bountyboard.runner.registry import Benchmark, HfRowsAdapter

MANIFEST_FILE = "manifest.json"
ANSWER_PATH = "/app/answer.txt"
# A distinct exit code for "this benchmark cannot be pulled: follow its harness's instructions".
EXIT_EXTERNAL_HARNESS = 3
# Datasets named bountyboard/<name> ship with the package (rows written for this project), so a
# first run needs no access to the Hugging Face Hub.
PACKAGED_DATASETS = Path(__file__).parent / "datasets"
PACKAGED_PREFIX = "bountyboard/"
HUB_PROBE_TIMEOUT_SECONDS = 5.0
HUB_WAYS_OUT = (
    "Ways out: for a gated or private dataset set HF_TOKEN (or run `huggingface-cli login`); for a dataset "
    "already in your Hugging Face cache set HF_HUB_OFFLINE=1; or pass --registry with an index.json whose "
    "record points `dataset` at a local copy. `bountyboard bench pull arithmetic` needs no Hub access at all"
)

_TASK_TOML = """\
schema_version = "1.4"
artifacts = []

[task]
name = {name}
version = "1.0.0"
description = {description}
authors = []
keywords = {keywords}

[metadata]
benchmark = {benchmark}
row_id = {row_id}
dataset = {dataset}
dataset_revision = {revision}
verifier = {verifier}

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 600.0

[environment]
build_timeout_sec = 600.0
"""

_DOCKERFILE = """\
FROM python:3.12-slim

WORKDIR /app
"""

_TEST_SH = """\
#!/bin/bash
# Scores /app/answer.txt against expected.json; writes /logs/verifier/reward.txt.
python3 "$(dirname "$0")/verify.py" --answer "${ANSWER_FILE:-/app/answer.txt}" \\
    --reward "${REWARD_FILE:-/logs/verifier/reward.txt}"
"""

_SOLVE_SH = """\
#!/bin/bash
# The reference answer (ANSWER_FILE lets bench run use the same script outside a container;
# the image's WORKDIR makes /app exist inside one).
printf '%s\\n' {answer} > "${{ANSWER_FILE:-{path}}}"
"""


class Manifest(BaseModel):
    """``<out>/manifest.json``."""

    benchmark: str
    benchmarkVersion: str | None = None
    dataset: str
    config: str | None = None
    split: str
    revision: str | None = None
    fingerprint: str | None = Field(default=None, description="The datasets library's fingerprint of the split.")
    seed: int
    n: int
    rowIds: list[str]
    tasks: list[str]
    verifier: dict[str, Any]
    metric: str | None = Field(default=None, description="The registry metric's name: the primary reward key "
                                                          "when the trials carry it.")
    pulledAt: str
    tool: str = f"bountyboard {__version__}"


class PullError(BountyboardError):
    pass


def _toml(value: Any) -> str:
    # JSON strings and arrays of strings are valid TOML basic strings and arrays.
    return json.dumps(value, ensure_ascii=False)


def task_dir_name(row_id: str) -> str:
    """A directory and Harbor package name made of ``[A-Za-z0-9._-]``, not starting with a dot."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", row_id).strip("-.")
    return name[:80] or "row"


def dataset_source(dataset: str) -> str:
    """What ``datasets.load_dataset`` is given: a packaged dataset's directory, else the hub id or path."""
    if dataset.startswith(PACKAGED_PREFIX):
        local = PACKAGED_DATASETS / dataset.removeprefix(PACKAGED_PREFIX)
        if local.is_dir():
            return str(local)
    return dataset


def _check_hub(adapter: HfRowsAdapter) -> None:
    """Ask the Hub for the dataset once, with a short timeout: unreachable, the ``datasets`` library
    would retry for half a minute and then say nothing of what to do."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    if constants.HF_HUB_OFFLINE:
        return  # the cache answers, or load_dataset fails at once
    where = f"{adapter.dataset} (revision {adapter.revision}) on {constants.ENDPOINT}"
    try:
        HfApi().dataset_info(adapter.dataset, revision=adapter.revision, timeout=HUB_PROBE_TIMEOUT_SECONDS)
    except GatedRepoError as exc:
        raise PullError(f"{where} is gated: accept its terms on the Hub and set HF_TOKEN. {HUB_WAYS_OUT}") from exc
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise PullError(f"{where} was not found (a private dataset needs HF_TOKEN). {HUB_WAYS_OUT}") from exc
    except HfHubHTTPError as exc:
        raise PullError(f"the Hub answered {exc.response.status_code} for {where}. {HUB_WAYS_OUT}") from exc
    except Exception as exc:  # network errors come in many types (httpx, OSError, timeouts)
        raise PullError(f"cannot reach the Hugging Face Hub for {where}: {type(exc).__name__}: {exc}. "
                        f"{HUB_WAYS_OUT}") from exc


def load_rows(adapter: HfRowsAdapter, split: str | None = None) -> Any:
    """The split, as ``datasets.load_dataset`` gives it (a packaged dataset, a local directory or a
    hub id, the last checked for reachability first)."""
    import datasets

    source = dataset_source(adapter.dataset)
    from_hub = not Path(source).exists()
    if from_hub:
        _check_hub(adapter)
    datasets.disable_progress_bars()
    try:
        return datasets.load_dataset(source, adapter.config, split=split or adapter.split, revision=adapter.revision)
    except Exception as exc:  # the library raises many kinds (network, missing split, bad files)
        raise PullError(f"cannot load {adapter.dataset} (config {adapter.config}, split "
                        f"{split or adapter.split}, revision {adapter.revision}): {exc}"
                        f"{f'. {HUB_WAYS_OUT}' if from_hub else ''}") from exc


def sample_indices(total: int, n: int, seed: int) -> list[int]:
    """``n`` distinct row indices, the same for the same (total, n, seed), in ascending order."""
    if n >= total:
        return list(range(total))
    return sorted(random.Random(seed).sample(range(total), n))


def field_value(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted path; through a list of records it collects the field of each."""
    value: Any = row
    for part in path.split("."):
        if isinstance(value, dict):
            if part not in value:
                raise PullError(f"the row has no field {path!r}; fields are {sorted(row)}")
            value = value[part]
        elif isinstance(value, list) and all(isinstance(item, dict) for item in value):
            value = [item.get(part) for item in value]
        else:
            raise PullError(f"cannot read {path!r} from the row: {part!r} is not inside a record")
    return value


def _instruction(question: str, context: str | None, choices: list[str] | None, labels: list[str] | None) -> str:
    parts = [context.strip(), ""] if context else []
    parts += [question.strip(), ""]
    if choices:
        keys = verifiers.choice_keys(choices, labels)
        parts += [f"{key}. {choice}" for key, choice in zip(keys, choices, strict=True)]
        parts += ["", f"Answer with the {'label' if labels else 'letter'} of the correct choice."]
    parts += ["Give only the final answer, with no explanation. "
              f"When you work in a container, write it to `{ANSWER_PATH}`."]
    return "\n".join(parts) + "\n"


def _json_value(value: Any) -> Any:
    """Targets stay JSON scalars or lists of them (datasets gives plain Python values)."""
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value if isinstance(value, int | float | str | bool) or value is None else str(value)


def _write_executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def write_task(out: Path, benchmark: Benchmark, row_id: str, row: dict[str, Any], revision: str | None) -> str:
    adapter = benchmark.adapter
    assert isinstance(adapter, HfRowsAdapter)
    fields = benchmark.fields
    choices = [str(choice) for choice in field_value(row, fields.choices)] if fields.choices else None
    labels = [str(label) for label in field_value(row, fields.labels)] if fields.labels else None
    context = str(field_value(row, fields.context)) if fields.context else None
    verifier = dict(adapter.verifier)
    expected = {"target": _json_value(field_value(row, fields.target)), "choices": choices, "labels": labels,
                "verifier": verifier}
    name = task_dir_name(row_id)
    task = out / name
    task.mkdir(parents=True, exist_ok=True)
    (task / "task.toml").write_text(_TASK_TOML.format(
        name=_toml(f"{benchmark.slug}/{name}"), description=_toml(f"{benchmark.name}, row {row_id}"),
        keywords=_toml([benchmark.slug]), benchmark=_toml(benchmark.slug), row_id=_toml(row_id),
        dataset=_toml(adapter.dataset), revision=_toml(revision or ""), verifier=_toml(verifier["kind"]),
    ))
    (task / "instruction.md").write_text(_instruction(str(field_value(row, fields.input)), context, choices, labels))
    (task / "environment").mkdir(exist_ok=True)
    (task / "environment" / "Dockerfile").write_text(_DOCKERFILE)
    tests = task / "tests"
    _write_executable(tests / "test.sh", _TEST_SH)
    shutil.copyfile(verifiers.__file__, tests / "verify.py")
    (tests / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")
    answer = verifiers.reference_answer(expected)
    _write_executable(task / "solution" / "solve.sh",
                      _SOLVE_SH.format(path=ANSWER_PATH, answer=shlex.quote(answer)))
    return name


def pull_rows(benchmark: Benchmark, out: Path, *, n: int, seed: int = 0, split: str | None = None) -> Manifest:
    """Write ``n`` rows of an ``hf_rows`` benchmark under ``out`` and return the manifest."""
    adapter = benchmark.adapter
    if not isinstance(adapter, HfRowsAdapter):
        raise PullError(f"{benchmark.slug} is a {adapter.kind} benchmark; only hf_rows rows can be pulled")
    if n < 1:
        raise PullError("--n must be at least 1")
    if out.exists() and any(out.iterdir()):
        raise PullError(f"{out} exists and is not empty; remove it or pull into another directory")
    rows = load_rows(adapter, split)
    indices = sample_indices(len(rows), n, seed)
    out.mkdir(parents=True, exist_ok=True)
    row_ids: list[str] = []
    names: list[str] = []
    for index in indices:
        row = rows[index]
        id_field = benchmark.fields.id
        row_id = str(field_value(row, id_field)) if id_field else str(index)
        name = write_task(out, benchmark, row_id, row, adapter.revision)
        if name in names:
            raise PullError(f"two rows map to the task directory {name!r}; row ids must be unique")
        row_ids.append(row_id)
        names.append(name)
    manifest = Manifest(
        benchmark=benchmark.slug, benchmarkVersion=benchmark.record.get("version"), dataset=adapter.dataset,
        config=adapter.config, split=split or adapter.split, revision=adapter.revision,
        fingerprint=getattr(rows, "_fingerprint", None), seed=seed, n=len(indices), rowIds=row_ids, tasks=names,
        verifier=dict(adapter.verifier), metric=(benchmark.record.get("metric") or {}).get("name"),
        pulledAt=clock.rfc3339(clock.now()) or "",
    )
    (out / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest


def read_manifest(tasks_dir: Path) -> Manifest | None:
    path = tasks_dir / MANIFEST_FILE
    return Manifest.model_validate_json(path.read_text()) if path.is_file() else None


def harbor_command(ref: str, slug: str, agent: str = "<agent>", model: str = "<model>") -> str:
    return f"bountyboard bench run {ref} --benchmark {slug} -a {agent} -m {model}"
