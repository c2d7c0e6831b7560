"""SIGKILL of ``bountyboard worker`` in the middle of a check: after a restart, exactly one result is
recorded per submission (issue 26). The API server runs no background job here; two worker
processes, one after the other, run the checks."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.market.support import claim, ok, private_market, status, submit
from tests.support.server import LiveServer, backends, psycopg_dsn

pytestmark = pytest.mark.sandbox

# Slow enough to be killed in the middle of: the first trial sleeps, then judges the content.
SLOW_42 = """#!/bin/bash
sleep 3
if grep -qx '42' /app/submission/content.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""
LEASE_SECONDS = 8


def _sql(server: LiveServer, query: str, parameters: list[str]) -> list[tuple[Any, ...]]:
    """Run one statement on the server's database from outside (``?`` placeholders); its rows, sorted."""
    if server.backend == "sqlite":
        connection = sqlite3.connect(server.db_url.split(":///", 1)[1])
        try:
            with connection:
                return sorted(connection.execute(query, parameters).fetchall())
        finally:
            connection.close()
    import psycopg2

    pg = psycopg2.connect(psycopg_dsn(server.db_url))
    try:
        with pg, pg.cursor() as cursor:
            cursor.execute(query.replace("?", "%s"), parameters)
            return sorted(cursor.fetchall()) if cursor.description else []
    finally:
        pg.close()


def _check_runs(server: LiveServer, submission_ids: list[str]) -> list[tuple[Any, ...]]:
    """(submission_id, status, attempts) of every check run of these submissions."""
    marks = ", ".join("?" for _ in submission_ids)
    return _sql(server, f"SELECT submission_id, status, attempts FROM check_runs WHERE submission_id IN ({marks})",
                submission_ids)


def _until(probe: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _worker(server: LiveServer, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "bountyboard", "worker"], env=server.env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.parametrize("backend", backends())
def test_sigkill_during_a_check_leaves_one_result_per_submission(backend: str, tmp_path: Path) -> None:
    env: dict[str, str | None] = {"BOUNTYBOARD_RUN_DISPATCHER": "false",
                                  "BOUNTYBOARD_CHECK_LEASE_SECONDS": str(LEASE_SECONDS),
                                  "BOUNTYBOARD_CHECK_POLL_SECONDS": "0.2"}
    with private_market(backend, tmp_path, env) as (live, market):
        publisher = market.publisher(funds=10)
        checks = {"binding": True, "maxAttempts": 2,
                  "verifier": {"files": {"test.sh": SLOW_42}, "trials": 1, "timeoutSec": 5},
                  "solution": {"resultType": "text", "content": "42"}}
        task = market.task(publisher, "fun", bounty=10, checks=checks)
        bot = market.operator().bot()
        claim_id = claim(bot, task["id"])
        submission_id = submit(bot, claim_id, {"resultType": "text", "content": "42"})["submissionId"]

        first = _worker(live, tmp_path / "worker-1.log")
        try:
            _until(lambda: status(bot, claim_id)["checkState"] == "running", "the check to start")
            time.sleep(1)  # inside the verifier's sleep: the sandbox is running
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
        assert status(bot, claim_id)["checkState"] == "running"  # leased by a dead worker

        second = _worker(live, tmp_path / "worker-2.log")
        try:
            _until(lambda: status(bot, claim_id)["checkState"] not in ("queued", "running"),
                   "the check to end after the restart", timeout=LEASE_SECONDS + 60)
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)

        checked = status(bot, claim_id)
        assert checked["checkState"] == "passed" and checked["status"] == "submitted"
        assert _check_runs(live, [submission_id]) == [(submission_id, "passed", 2)]
        events = ok(bot.http.get("/v1/agent/events", params={"types": "claim.checked"}))["data"]
        assert [event["data"]["submissionId"] for event in events] == [submission_id]

        # The receipt replays and agrees; a receipt that recorded another outcome is a disagreement.
        assert live.run_cli("checks", "replay", submission_id).returncode == 0
        edit = ("json_set(receipt, '$.status', 'failed')" if live.backend == "sqlite"
                else "jsonb_set(receipt, '{status}', '\"failed\"')")
        _sql(live, f"UPDATE check_runs SET receipt = {edit} WHERE submission_id = ?", [submission_id])
        disagreeing = live.run_cli("checks", "replay", submission_id)
        assert disagreeing.returncode == 3 and "DISAGREES: recorded failed, replayed passed" in disagreeing.stderr
        report = json.loads(disagreeing.stdout)
        assert not report["agrees"] and report["differences"] == [
            {"field": "status", "recorded": "failed", "replayed": "passed"}]
