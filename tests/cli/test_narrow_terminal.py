"""At 80 columns, CLI tables keep every id whole, so it can be copied into the next command."""

from __future__ import annotations

import json
from pathlib import Path

from tests.client.loop import REPO_ROOT, Marketplace, cli_env, run_cli
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
    return [key["id"] for key in json.loads(listed_json)]


def test_bench_search_shows_every_slug_whole_at_80_columns(tmp_path: Path) -> None:
    """The hub's own registry, searched offline: slugs such as bbh-boolean-expressions are what
    ``bench info`` and ``bench pull`` take, so none is wrapped or cut."""
    registry = REPO_ROOT / "src" / "bountyboard" / "benchhub" / "data" / "registry.json"
    slugs = [record["slug"] for record in json.loads(registry.read_text())["benchmarks"]]
    assert max(map(len, slugs)) > 20  # long enough to be squeezed in a table of five columns
    found = run_cli("bench", "search", "--registry", str(registry), env=cli_env("http://127.0.0.1:9", None, tmp_path,
                                                                                 COLUMNS="80"))
    assert found.returncode == 0, found.stderr
    shown = set(found.stdout.split())
    for slug in slugs:
        assert slug in shown, f"{slug} wrapped or cut:\n{found.stdout}"
    assert max(len(line) for line in found.stdout.splitlines()) <= 80
