"""The benchmark hub for humans: search, a benchmark's page with its scores chart, a model's page with
reproduced results, gaps and its runs, and a run's page with its outcome on each task.
(``/benchhub/index.json`` is the hub's own static registry.)

Both result pages take ``?anonymous=hide`` (a control on the page) to leave anonymous runs out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from bountyboard.benchhub import results
from bountyboard.benchhub import service as hub
from bountyboard.benchhub.schemas import RunDetail
from bountyboard.pagination import PageParams
from bountyboard.site.charts import score_chart
from bountyboard.site.pages.public import choice, paging
from bountyboard.site.web import CurrentVisitor, PageRoute, redirect, render
from bountyboard.storage.session import ReadSession

router = APIRouter(route_class=PageRoute, include_in_schema=False)
KINDS = ["hf_rows", "harbor_native", "external_harness"]
HUB_PAGE_SIZE = 24
ANONYMOUS_CHOICES = ["show", "hide"]
MODEL_RUNS = 50


@router.get("/benchhub/", response_class=HTMLResponse)
async def hub_page(request: Request, visitor: CurrentVisitor, session: ReadSession, q: str = "", kind: str = "",
                   page: int = 1) -> HTMLResponse:
    q, kind = q.strip()[:200], choice(kind, KINDS)
    params = paging(page, HUB_PAGE_SIZE)
    records, total = await hub.search_benchmarks(session, q or None, kind or None, None, params)
    return render(request, visitor, "benchhub.html", section="benchhub", records=records, total=total, q=q,
                  kind=kind, kinds=KINDS, page=params.page, has_more=params.offset + len(records) < total)


@router.get("/benchhub/models", response_class=HTMLResponse)
async def find_model(model: str = "") -> RedirectResponse:
    """The model search box: off to the model's page."""
    return redirect(f"/benchhub/models/{quote(model.strip(), safe='/')}" if model.strip() else "/benchhub/")


@router.get("/benchhub/models/{model:path}", response_class=HTMLResponse)
async def model_page(request: Request, model: str, visitor: CurrentVisitor, session: ReadSession,
                     anonymous: str = "show") -> HTMLResponse:
    anonymous = choice(anonymous, ANONYMOUS_CHOICES) or "show"
    answer = await results.reproduced(session, model[:300], include_anonymous=anonymous == "show")
    runs, total = await hub.list_runs(session, PageParams(pageSize=MODEL_RUNS), model=model[:300])
    return render(request, visitor, "bench_model.html", section="benchhub", answer=answer, anonymous=anonymous,
                  runs=runs, runs_total=total)


@dataclass
class TaskOutcome:
    """One task of a run: its attempts' primary rewards (None where the verifier gave none) and errors."""

    task: str
    rewards: list[float | None]
    errors: list[str]

    @property
    def mean(self) -> float:
        """Harbor's mean over the task's attempts, an attempt without the reward counting 0."""
        return sum(value or 0.0 for value in self.rewards) / len(self.rewards)


def task_outcomes(run: RunDetail) -> list[TaskOutcome]:
    """The run's trials grouped by task, in the order the tasks were first uploaded."""
    tasks: dict[str, TaskOutcome] = {}
    for trial in run.trials:
        outcome = tasks.setdefault(trial["taskId"], TaskOutcome(trial["taskId"], [], []))
        rewards: dict[str, Any] = trial.get("rewards") or {}
        value = rewards.get(run.primaryMetric)
        outcome.rewards.append(float(value) if isinstance(value, int | float) else None)
        if trial.get("error"):
            outcome.errors.append(str(trial["error"]))
    return list(tasks.values())


@router.get("/benchhub/runs/{run_id}", response_class=HTMLResponse)
async def run_page(request: Request, run_id: str, visitor: CurrentVisitor, session: ReadSession) -> HTMLResponse:
    run = await hub.get_run(session, run_id)
    return render(request, visitor, "bench_run.html", section="benchhub", run=run, tasks=task_outcomes(run))


@router.get("/benchhub/{slug}", response_class=HTMLResponse)
async def benchmark_page(request: Request, slug: str, visitor: CurrentVisitor, session: ReadSession,
                         anonymous: str = "show") -> HTMLResponse:
    anonymous = choice(anonymous, ANONYMOUS_CHOICES) or "show"
    benchmark = await hub.get_benchmark(session, slug)
    board = await results.leaderboard(session, slug, include_anonymous=anonymous == "show")
    record = benchmark.record
    # Every claim the hub knows for this benchmark, as each model's page takes it (registry or upload).
    claims = await results.benchmark_claims(session, record, include_anonymous=anonymous == "show")
    rows = [(f"{entry.model} · {entry.agent}", entry) for entry in board.data]
    claimed = {label: claims[entry.modelKey].info.value for label, entry in rows if entry.modelKey in claims}
    measured_keys = {entry.modelKey for entry in board.data}
    claimed.update({claim.model: claim.info.value for key, claim in claims.items() if key not in measured_keys})
    chart = score_chart([(label, entry.mean, (entry.ci95.low, entry.ci95.high) if entry.ci95 else None)
                         for label, entry in rows], claimed, board.metric.min, board.metric.max)
    pairs = await results.pairwise(session, board)
    return render(request, visitor, "benchmark.html", section="benchhub", record=record, board=board, chart=chart,
                  claims=[claims[key] for key in sorted(claims)], pairs=pairs, anonymous=anonymous)
