"""``bench export --format hf-eval-results MODEL``: a model's hub results as the ``.eval_results/*.yaml``
files of its Hugging Face repo (docs/bench.md, "Exporting results").

For each benchmark the model has non-retracted runs on (calibration agents aside), the run with the
most tasks (the newest among equals) is written as the hub renders it
(``GET /v1/bench/runs/{id}?format=hf-eval-results``) to ``.eval_results/<benchmark>.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bountyboard.client.transport import ApiError, Transport

PAGE_SIZE = 100


@dataclass
class Exported:
    written: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _runs(transport: Transport, model: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = transport.request("GET", "/v1/bench/runs", params={
            "model": model, "retracted": "false", "page": page, "pageSize": PAGE_SIZE}).json()
        runs.extend(answer["data"])
        if not answer["hasMore"]:
            return runs
        page += 1


def hf_eval_results(transport: Transport, model: str, out: Path) -> Exported:
    """Write ``out/.eval_results/<benchmark>.yaml`` for each benchmark the model was measured on."""
    chosen: dict[str, dict[str, Any]] = {}
    for run in _runs(transport, model):
        if run["calibration"] or run["score"] is None:
            continue
        best = chosen.get(run["benchmark"])
        if best is None or (run["nTasks"], run["createdAt"]) > (best["nTasks"], best["createdAt"]):
            chosen[run["benchmark"]] = run
    exported = Exported()
    folder = out / ".eval_results"
    for slug, run in sorted(chosen.items()):
        try:
            text = transport.request("GET", f"/v1/bench/runs/{run['id']}",
                                     params={"format": "hf-eval-results"}).text
        except ApiError as exc:
            if exc.status != 422:
                raise
            exported.skipped.append(f"{slug}: {exc.detail}")
            continue
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{slug}.yaml").write_text(text, encoding="utf-8")
        exported.written.append(folder / f"{slug}.yaml")
    return exported
