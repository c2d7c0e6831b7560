"""Processes starting together on a fresh database migrate one after the other (issue: 6 of 9
concurrent ``db upgrade`` crashed with "table already exists")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import backends, database_url

PROCESSES = 9


@pytest.mark.parametrize("backend", backends())
def test_concurrent_upgrades_of_a_fresh_database_all_succeed(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        env = {**os.environ, "BOUNTYBOARD_DATA_DIR": str(tmp_path), "BOUNTYBOARD_DATABASE_URL": url,
               "BOUNTYBOARD_SECRET_KEY": "migration-lock-test"}
        started = [subprocess.Popen([sys.executable, "-m", "bountyboard", "db", "upgrade"], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                   for _ in range(PROCESSES)]
        results = [(process.wait(timeout=180), process.stdout.read() if process.stdout else "")
                   for process in started]
        failures = [output for code, output in results if code != 0]
        assert not failures, f"{len(failures)} of {PROCESSES} failed; first:\n{failures[0]}"
        again = subprocess.run([sys.executable, "-m", "bountyboard", "db", "upgrade"], env=env,
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
