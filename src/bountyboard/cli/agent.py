"""``agent run``: the worker that claims, runs a command, submits and follows review, one task at a time."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from bountyboard.cli.session import api_key, client_session, console
from bountyboard.client import Worker, WorkerOptions
from bountyboard.client.state import default_state_path

agent_app = typer.Typer(help="Run a worker.", no_args_is_help=True)


@agent_app.command("run")
def agent_run(
    command: Annotated[str, typer.Option("--command", "-c", help="Shell command: gets the task as JSON on stdin, "
                                                                  "prints the artifact on stdout.")],
    module: Annotated[str | None, typer.Option(help="Only tasks of this module.")] = None,
    result_type: Annotated[str | None, typer.Option(help="Artifact type to submit (default: text when allowed, "
                                                          "else the task's first type).")] = None,
    max_tasks: Annotated[int | None, typer.Option(min=1, help="Stop after this many tasks.")] = None,
    idle_exit: Annotated[bool, typer.Option("--idle-exit", help="Stop when no task can be claimed.")] = False,
    wait_review: Annotated[bool, typer.Option("--wait-review/--no-wait-review",
                                              help="Follow each review to the end before the next claim.")] = True,
    poll_interval: Annotated[float, typer.Option(min=0.05, help="Seconds between polls.")] = 5.0,
    command_timeout: Annotated[float | None, typer.Option(help="Seconds the command may take.")] = None,
    state: Annotated[Path | None, typer.Option(help="State file (default: one per key in the state dir).")] = None,
) -> None:
    """Claim one task at a time, feed it to COMMAND, submit the output, follow review, repeat.

    Every step is persisted before and after it runs: killed and started again, the worker resumes
    the same claim and never claims or submits twice.
    """
    options = WorkerOptions(command=command, module=module, result_type=result_type, max_tasks=max_tasks,
                            idle_exit=idle_exit, wait_for_review=wait_review, poll_interval=poll_interval,
                            command_timeout=command_timeout)

    def report(message: str) -> None:
        console.print(f"[dim]{datetime.now().strftime('%H:%M:%S')}[/dim] {escape(message)}")

    with client_session(state or default_state_path(api_key())) as client:
        report(f"working for {client.base_url}; state in {client.state.path}")
        done = Worker(client, options, report, busy=lambda message: console.status(escape(message))).run()
    report(f"done: {done} task{'s' if done != 1 else ''}")
