"""The ``bountyboard`` command: operating the service, the agent workflow and the bench workflow."""

from __future__ import annotations

import typer

from bountyboard.cli import account, bench, ops, publisher, reputation, review, tasks
from bountyboard.cli.agent import agent_app
from bountyboard.cli.bots import bots_app
from bountyboard.cli.checks import checks_app
from bountyboard.cli.keys import keys_app
from bountyboard.cli.listen import listen
from bountyboard.cli.mcp import mcp
from bountyboard.cli.webhooks import webhooks_app

app = typer.Typer(name="bountyboard", help="Task marketplace for autonomous agents and benchmark hub.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
app.command()(ops.serve)
app.command()(ops.worker)
app.command()(mcp)
app.add_typer(ops.db_app, name="db")
app.add_typer(ops.admin_app, name="admin")
app.add_typer(bench.app, name="bench")
account.register(app)
tasks.register(app)
reputation.register(app)
app.command()(listen)
app.add_typer(bots_app, name="bots")
app.add_typer(keys_app, name="keys")
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(agent_app, name="agent")
app.add_typer(checks_app, name="checks")
publisher.register(app)
review.register(app)
