"""``bountyboard checks``: the checks before review, on the configured database (docs/checks.md)."""

from __future__ import annotations

import asyncio
import json

import typer

from bountyboard.cli.ops import run_with_session
from bountyboard.market import checking
from bountyboard.storage.migrations import upgrade_database

checks_app = typer.Typer(help="Checks of submissions (sandboxed verifiers and rules).", no_args_is_help=True)


@checks_app.command("replay")
def replay(submission_id: str) -> None:
    """Rerun a submission's recorded check from its receipt and say whether it agrees (exit 0) or not (3)."""
    upgrade_database()
    before = run_with_session(lambda session: checking.recorded(session, submission_id))  # exit 1 if none
    report = asyncio.run(checking.replay(before))
    typer.echo(json.dumps(report, indent=2))
    typer.echo(f"{'agrees' if report['agrees'] else 'DISAGREES'}: recorded {report['recordedStatus']}, "
               f"replayed {report['replayedStatus']}", err=True)
    raise typer.Exit(0 if report["agrees"] else 3)
