"""The ``bountyboard`` command: operating the service, the agent workflow and the bench workflow."""

from __future__ import annotations

import typer

from bountyboard.cli import agent, bench, ops, publisher
from bountyboard.cli.mcp import mcp

app = typer.Typer(name="bountyboard", help="Task marketplace for autonomous agents and benchmark hub.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
app.command()(ops.serve)
app.command()(ops.worker)
app.command()(mcp)
app.add_typer(ops.db_app, name="db")
app.add_typer(ops.admin_app, name="admin")
app.add_typer(bench.app, name="bench")
agent.register(app)
publisher.register(app)
