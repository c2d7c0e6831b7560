"""``bountyboard bench``: search, info, pull, run and push benchmark runs (SPEC.md section 4).

Exit codes: 0 success; 1 failure; 2 bad usage; 3 the benchmark uses an external harness (``pull``
printed its instructions); 4 the ``harbor`` CLI is needed but not installed. docs/bench.md has
the whole workflow.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from bountyboard import clock
from bountyboard.benchhub.stats import harbor_metrics
from bountyboard.cli import session, tables
from bountyboard.runner.adapters import EXIT_EXTERNAL_HARNESS, PullError, harbor_command, pull_rows
from bountyboard.runner.agents import AgentSpec
from bountyboard.runner.harbor import TrialResult, default_job_name, eval_stats, headline, trial_rows
from bountyboard.runner.harness import EXIT_HARBOR_MISSING, HarborRun, is_harbor_ref
from bountyboard.runner.jobs import JobError, JobRunner, RunOptions
from bountyboard.runner.registry import (
    Benchmark,
    ExternalHarnessAdapter,
    HarborNativeAdapter,
    Registry,
    RegistryError,
)

if TYPE_CHECKING:
    from bountyboard.runner.push import PreparedRun

app = typer.Typer(help="Find benchmarks, pull rows as Harbor tasks, run agents on them and upload the scores.",
                  no_args_is_help=True)
console, err_console = session.console, session.err_console

# Unset, the service address and key come from BOUNTYBOARD_BASE_URL / BOUNTYBOARD_API_KEY or from
# what `bountyboard login` stored.
BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", show_default=False, help="The bountyboard service (default: BOUNTYBOARD_BASE_URL or the login).")]
ApiKey = Annotated[str | None, typer.Option(
    "--api-key", show_default=False,
    help="API key (default: BOUNTYBOARD_API_KEY or the login); uploads work without one, at a lower limit.")]
RegistryOption = Annotated[str | None, typer.Option(
    "--registry", help="A static index.json (path or URL) to read instead of the service's API.")]


def _fail(message: str, code: int = 1) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)


def _registry(base_url: str | None, registry: str | None) -> Registry:
    return Registry(base_url=base_url or session.base_url(), source=registry)


def _benchmark(base_url: str | None, registry: str | None, slug: str) -> Benchmark:
    try:
        return _registry(base_url, registry).get(slug)
    except RegistryError as exc:
        raise _fail(str(exc)) from exc


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words to find in the slug, name, description or tags.")] = "",
    registry: RegistryOption = None,
    base_url: BaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the matching records as JSON.")] = False,
) -> None:
    """Find benchmarks in the registry."""
    try:
        records = _registry(base_url, registry).search(query)
    except RegistryError as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(records, indent=2))
        return
    rows = [[record.get("slug"), record.get("name", ""),
             ((record.get("harbor") or {}).get("adapter") or {}).get("kind", "?"),
             (record.get("metric") or {}).get("name", ""), ", ".join(map(str, record.get("tags") or []))]
            for record in records]
    # The slug is what the next command takes (bench info, pull): shown whole, never wrapped or cut.
    listing = tables.table(f"Benchmarks ({len(rows)})", ["slug", "name", "adapter", "metric", "tags"], rows,
                           whole={"slug"})
    console.print(listing if records else Text(f"no benchmark matches {query!r}"))


@app.command()
def info(
    slug: str,
    registry: RegistryOption = None,
    base_url: BaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record as JSON.")] = False,
) -> None:
    """Show a benchmark's record; the adapter kind is at harbor.adapter.kind."""
    benchmark = _benchmark(base_url, registry, slug)
    if as_json:
        typer.echo(json.dumps(benchmark.record, indent=2))
        return
    record = benchmark.record
    console.print(f"[bold]{escape(benchmark.name)}[/bold] ({benchmark.slug}, version "
                  f"{escape(str(record.get('version', '?')))})")
    if record.get("description"):
        console.print(record["description"], markup=False)
    console.print(f"adapter: {benchmark.adapter.kind}")
    metric = record.get("metric") or {}
    if metric:
        console.print(f"metric: {metric.get('name')} (higher is better: {metric.get('higherIsBetter', True)})",
                      markup=False)
    for score in record.get("referenceScores") or []:
        console.print(f"reference: {score.get('model')} = {score.get('value')} ({score.get('sourceUrl', '')})",
                      markup=False)


@app.command()
def pull(
    slug: str,
    n: Annotated[int, typer.Option("--n", min=1, help="How many rows to pull.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the row sample (same seed, same rows).")] = 0,
    split: Annotated[str | None, typer.Option("--split", help="Dataset split (default: the record's).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Target directory (default ./<slug>).")] = None,
    registry: RegistryOption = None,
    base_url: BaseUrl = None,
) -> None:
    """Pull benchmark rows as Harbor task directories into ./<slug> (hf_rows benchmarks)."""
    benchmark = _benchmark(base_url, registry, slug)
    adapter = benchmark.adapter
    if isinstance(adapter, HarborNativeAdapter):
        console.print(f"{slug} is a Harbor dataset: nothing to pull. Run it with:\n\n"
                      f"  {harbor_command(adapter.ref, slug)}\n", markup=False)
        return
    if isinstance(adapter, ExternalHarnessAdapter):
        console.print(f"{slug} runs in its own harness ({adapter.harness or 'external'}) and cannot be pulled "
                      f"or run by bountyboard.\n\n{adapter.instructions}\n", markup=False)
        if adapter.url:
            console.print(f"See {adapter.url}", markup=False)
        raise typer.Exit(EXIT_EXTERNAL_HARNESS)
    target = out or Path(slug)
    try:
        manifest = pull_rows(benchmark, target, n=n, seed=seed, split=split)
    except PullError as exc:
        raise _fail(str(exc)) from exc
    console.print(f"pulled {manifest.n} tasks of {slug} into {target}/ (dataset {manifest.dataset}, "
                  f"split {manifest.split}, revision {manifest.revision or 'default'}, seed {seed})")
    console.print(f"next: bountyboard bench run {target} -a <agent> -m <model>")


def _summary(runner: JobRunner) -> Table:
    """What Harbor prints at the end of a job, counted by the same functions as the hub's score:
    every trial counts (an errored one as 0), one mean per reward key, the primary key first; `trials`
    is Harbor's n_trials, the trials with a reward."""
    trials = runner.trials
    stats = eval_stats(trials)
    key, score = headline(trials, registry_key=runner.manifest.metric if runner.manifest else None)
    means = harbor_metrics(trial_rows(trials))
    table = Table(title=f"job {runner.job_name}")
    for column in ("benchmark", "agent", "model", "tasks", "trials", "errors", f"mean {key}",
                   *(f"mean {other}" for other in means if other != key), *(f"pass@{k}" for k in stats.pass_at_k)):
        table.add_column(escape(column))
    table.add_row(runner.benchmark or "-", runner.options.agent.name, runner.options.agent.model or "-",
                  str(len({trial.task_name for trial in trials})), str(stats.n_trials), str(stats.n_errors),
                  f"{score:.3f}", *(f"{value:.3f}" for other, value in means.items() if other != key),
                  *(f"{value:.3f}" for value in stats.pass_at_k.values()))
    return table


def _run_local(options: RunOptions) -> None:
    try:
        runner = JobRunner(options)
        queue = runner.prepare()
    except (JobError, ValueError) as exc:
        raise _fail(str(exc), 2 if isinstance(exc, ValueError) else 1) from exc
    if len(queue) < len(runner.tasks) * options.attempts:
        console.print(f"resuming {runner.job_dir}: {len(runner.trials)} trials done, {len(queue)} to run")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        bar = progress.add_task(f"{options.agent.name} on {options.tasks_dir}", total=len(queue))

        def advance(trial: TrialResult) -> None:
            progress.advance(bar)

        runner.on_trial = advance
        try:
            asyncio.run(runner.run())
        except KeyboardInterrupt:
            raise _fail(f"interrupted; run the same command with --job-name {runner.job_name} to resume") from None
    console.print(_summary(runner))
    console.print(f"wrote {runner.job_dir}/; upload with: bountyboard bench push {options.jobs_dir}")


@app.command()
def run(
    target: Annotated[str, typer.Argument(help="A pulled directory (./<slug>) or a Harbor reference org/name@rev.")],
    agent: Annotated[str, typer.Option("-a", "--agent", help="oracle, nop, command or openai.")],
    model: Annotated[str | None, typer.Option("-m", "--model", help="The model, e.g. openai/gpt-4o-mini.")] = None,
    attempts: Annotated[int, typer.Option("-k", "--attempts", min=1, help="Attempts per task.")] = 1,
    concurrency: Annotated[int, typer.Option("-n", "--concurrency", min=1, help="Trials at once.")] = 4,
    command: Annotated[str | None, typer.Option("--command", help="Shell command of the command agent "
                                                "(instruction on stdin, answer on stdout).")] = None,
    model_base_url: Annotated[str | None, typer.Option(
        "--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible API of the openai agent (env OPENAI_BASE_URL).")
    ] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the model API key.")
                           ] = "OPENAI_API_KEY",
    benchmark: Annotated[str | None, typer.Option(help="Benchmark slug (needed with a Harbor reference).")] = None,
    jobs_dir: Annotated[Path, typer.Option(help="Where job directories go.")] = Path("jobs"),
    job_name: Annotated[str | None, typer.Option(help="Job name (default <date>__<time>__<agent>__<model>); an "
                                                 "existing job of that name is resumed.")] = None,
    env: Annotated[str | None, typer.Option("-e", "--env", help="Harbor references: harbor's environment, a type "
                                            "(docker, daytona, modal, ...) or module:Class.")] = None,
    include: Annotated[list[str] | None, typer.Option(
        "-i", "--include-task-name", help="Harbor references: run only tasks matching this glob (repeatable).")] = None,
    exclude: Annotated[list[str] | None, typer.Option(
        "-x", "--exclude-task-name", help="Harbor references: skip tasks matching this glob (repeatable).")] = None,
    n_tasks: Annotated[int | None, typer.Option(
        "-l", "--n-tasks", min=1, help="Harbor references: at most this many tasks (after the filters).")] = None,
    harbor_registry: Annotated[Path | None, typer.Option(
        help="Harbor references: a local Harbor registry.json (harbor's --registry-path).")] = None,
) -> None:
    """Run an agent on a pulled directory (locally, no Docker) or hand a Harbor reference to harbor."""
    if is_harbor_ref(target):
        if not benchmark:
            raise _fail("a Harbor reference needs --benchmark SLUG (the job is tagged with it)", 2)
        handoff = HarborRun(ref=target, benchmark=benchmark, agent=agent, model=model, attempts=attempts,
                            concurrency=concurrency, jobs_dir=jobs_dir,
                            job_name=job_name or default_job_name(agent, model, clock.now()), environment=env,
                            include_tasks=include or [], exclude_tasks=exclude or [], n_tasks=n_tasks,
                            registry_path=harbor_registry)
        try:
            code = handoff.execute()
        except FileNotFoundError as exc:
            raise _fail(str(exc), EXIT_HARBOR_MISSING) from exc
        if code == 0:
            console.print(f"upload with: bountyboard bench push {jobs_dir / handoff.job_name}")
        raise typer.Exit(code)
    if env or include or exclude or n_tasks or harbor_registry:
        raise _fail("-e, -i, -x, -l and --harbor-registry are handed to harbor: they apply to Harbor references "
                    "only", 2)
    spec = AgentSpec(name=agent, model=model, command=command, base_url=model_base_url, api_key_env=api_key_env)
    _run_local(RunOptions(tasks_dir=Path(target), agent=spec, attempts=attempts, concurrency=concurrency,
                          jobs_dir=jobs_dir, job_name=job_name, benchmark=benchmark))


@app.command()
def push(
    path: Annotated[Path, typer.Argument(help="A job directory, or a directory of them (./jobs).")] = Path("jobs"),
    benchmark: Annotated[str | None, typer.Option(help="Benchmark slug, for jobs whose tasks bench pull did not "
                                                  "write (read from their manifest or task.toml otherwise).")] = None,
    model: Annotated[str | None, typer.Option(help="Report the runs under this model name.")] = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", help="The reward key the score is the mean of (default: the benchmark's metric key when the "
        "trials carry it, else `reward`, else the only key).")] = None,
    claim: Annotated[float | None, typer.Option(help="A published score to check against this run.")] = None,
    claim_url: Annotated[str | None, typer.Option(help="Where the claimed score is published.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the payloads; upload nothing.")] = False,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
) -> None:
    """Upload job directories (written by bench run or by Harbor) with POST /v1/runs."""
    from bountyboard.runner import push as pushing

    if (claim is None) != (claim_url is None):
        raise _fail("--claim and --claim-url go together", 2)
    try:
        prepared = pushing.prepare(path, benchmark=benchmark, model=model, metric=metric,
                                   claim={"value": claim, "sourceUrl": claim_url} if claim is not None else None)
    except pushing.PushError as exc:
        raise _fail(str(exc)) from exc
    failed = False
    for run_ in prepared:
        for trial in run_.skipped:
            err_console.print(f"skipped {run_.job.name}/{trial}: no result.json (the trial never finished)",
                              markup=False)
        if run_.problem:
            err_console.print(f"[red]{escape(run_.job.name)}:[/red] {escape(run_.problem)}", highlight=False,
                              soft_wrap=True)
            failed = True
    ready = [run_ for run_ in prepared if run_.payload is not None]
    if dry_run:
        typer.echo(json.dumps([pushing.payload_json(run_) for run_ in ready], indent=2))
        raise typer.Exit(1 if failed else 0)
    failed = not _upload_all(ready, base_url, api_key) or failed
    raise typer.Exit(1 if failed else 0)


@app.command("export")
def export_results(
    model: Annotated[str, typer.Argument(help="The model whose results to export, e.g. acme/calc-1.")],
    format_: Annotated[str, typer.Option("--format", help="hf-eval-results: a Hugging Face model repo's "
                                         ".eval_results/<benchmark>.yaml files.")] = "hf-eval-results",
    out: Annotated[Path, typer.Option("--out", help="The model repo's directory (the files go in .eval_results/).")
                   ] = Path("."),
    base_url: BaseUrl = None,
) -> None:
    """Export a model's hub results for another site (the hub's run with the most tasks per benchmark)."""
    from bountyboard.client.transport import Transport
    from bountyboard.runner.export import hf_eval_results

    if format_ != "hf-eval-results":
        raise _fail(f"unknown format {format_!r}: hf-eval-results (a run in Every Eval Ever's form is "
                    "GET /v1/bench/runs/{id}?format=every-eval-ever)", 2)
    with Transport(base_url or session.base_url()) as transport:
        exported = hf_eval_results(transport, model, out)
    for skipped in exported.skipped:
        err_console.print(f"skipped {skipped}", markup=False)
    if not exported.written:
        raise _fail(f"no run of {model} can be exported as Hugging Face evaluation results")
    for path in exported.written:
        console.print(f"wrote {path}", markup=False)


def _upload_all(ready: list[PreparedRun], base_url: str | None, api_key: str | None) -> bool:
    """Upload each prepared run, with a progress bar; stop at the first 429. True when all went up."""
    import httpx

    from bountyboard.client.transport import ApiError
    from bountyboard.runner import push as pushing

    ok = True
    with (pushing.UploadTransport(base_url or session.base_url(), api_key or session.api_key()) as transport,
          Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True, disable=len(ready) < 2 or not console.is_terminal) as progress):
        bar = progress.add_task("uploading runs", total=len(ready))
        for run_ in ready:
            try:
                answer: dict[str, Any] = pushing.upload(transport, run_)
            except pushing.QuotaExceeded as exc:
                left = len(ready) - int(progress.tasks[bar].completed)
                progress.stop()
                err_console.print(f"[red]upload quota spent:[/red] {escape(str(exc))}. {left} run(s) not uploaded.",
                                  highlight=False, soft_wrap=True)
                return False
            except (ApiError, httpx.HTTPError) as exc:
                err_console.print(f"[red]{escape(run_.label)}:[/red] upload failed: {escape(str(exc))}",
                                  highlight=False)
                ok = False
            else:
                progress.console.print(_uploaded_line(run_, answer), highlight=False, soft_wrap=True, markup=False)
            progress.advance(bar)
    return ok


def _uploaded_line(run_: PreparedRun, answer: dict[str, Any]) -> str:
    stored = answer.get("run") or {}
    score = stored.get("score")
    benchmark = stored.get("benchmark") or (run_.payload.benchmark if run_.payload else "?")
    status = "duplicate of" if answer.get("duplicate") else "uploaded as"
    metrics = stored.get("metrics") or {}
    others = ", ".join(f"{key} {value:.3f}" for key, value in metrics.items() if isinstance(value, int | float))
    return (f"{run_.label} on {benchmark}: {status} {stored.get('id')}, score "
            f"{'-' if score is None else f'{score:.3f}'} ({stored.get('nTrials')} trials, {stored.get('nErrors')} "
            f"errors{f'; means: {others}' if others else ''})")
