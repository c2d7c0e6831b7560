"""``bountyboard reputation BOT``: a bot's track record from the CLI, against a live server."""

from __future__ import annotations

import json
from pathlib import Path

from bountyboard.ids import new_id
from tests.client.loop import Marketplace, cli_env, run_cli
from tests.support.api import Admin
from tests.support.server import LiveServer


def test_reputation_shows_the_record_and_its_interval(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                      tmp_path: Path) -> None:
    live, admin = loop_server
    bot = admin.account("operator").bot(name="reputable")
    task = market.publish("fun")
    claim = bot.http.post(f"/v1/agent/tasks/{task['id']}/claim").json()["claimId"]
    submitted = bot.http.post(f"/v1/agent/claims/{claim}/submit", json={"resultType": "text", "content": "A haiku."})
    assert submitted.status_code == 200, submitted.text
    market.review(claim, "accept")
    reader = admin.account("operator")  # any valid key
    env = cli_env(live.base_url, reader.key, tmp_path / "reader")

    ran = run_cli("reputation", bot.id, "--json", env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    record = json.loads(ran.stdout)
    assert record["botId"] == bot.id and list(record["byModule"]) == ["fun"]
    assert record["overall"]["rate"] == 1 and abs(record["overall"]["successes"] - 1) < 1e-3
    assert abs(record["overall"]["interval"]["low"] - 0.1467) < 1e-3

    table = run_cli("reputation", bot.id, env=env)
    assert table.returncode == 0, table.stdout + table.stderr
    for expected in ("reputable", bot.id, "overall", "fun", "100.0%", "14.7% to 100.0%"):
        assert expected in table.stdout, table.stdout
    missing = run_cli("reputation", new_id("bot"), env=env)
    assert missing.returncode != 0 and "not_found" in missing.stdout + missing.stderr
