"""At 80 columns, CLI tables keep every id whole, so it can be copied into the next command."""

from __future__ import annotations

from pathlib import Path

from tests.client.loop import Marketplace, cli_env, run_cli
from tests.support.api import Admin
from tests.support.server import LiveServer


def test_ids_are_never_wrapped_or_cut_at_80_columns(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                    tmp_path: Path) -> None:
    server, admin = loop_server
    operator = admin.account("operator")
    bots = [operator.bot(name=f"a-bot-with-a-rather-long-name-{number}", description="x" * 60) for number in range(2)]
    env = cli_env(server.base_url, operator.key, tmp_path, COLUMNS="80")
    keys = run_cli("keys", env=env)
    assert keys.returncode == 0, keys.stderr
    listed = run_cli("keys", "--json", env=env).stdout
    wanted = [bot.id for bot in bots] + [key_id for key_id in _key_ids(listed)]
    assert len(wanted) >= 4
    for identifier in wanted:
        assert identifier in keys.stdout, f"{identifier} wrapped or cut:\n{keys.stdout}"
    assert max(len(line) for line in keys.stdout.splitlines()) <= 80
    assert "tasks:read" in keys.stdout  # the other columns are shown too, not squeezed to nothing
    shown = run_cli("bots", env=env)
    for bot in bots:
        assert bot.id in shown.stdout, shown.stdout
    task = market.publish("fun", description="A description long enough to need folding " * 5)
    detail = run_cli("tasks", "show", task["id"], env=cli_env(server.base_url, market.bot.key, tmp_path,
                                                              COLUMNS="80"))
    assert task["id"] in detail.stdout and task["publisherId"] in detail.stdout, detail.stdout


def _key_ids(listed_json: str) -> list[str]:
    import json

    return [key["id"] for key in json.loads(listed_json)]
