"""The README's first loop, run as written (its fenced shell block) against a live server of its own."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import LiveServer, backends, database_url

REPO_ROOT = Path(__file__).resolve().parents[2]


def first_loop() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A first loop", 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "no shell block in the README's first loop"
    return match[1]


@pytest.fixture(scope="module", params=backends())
def fresh_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server nobody else uses: the loop's emails and its one task must be the only ones."""
    data_dir = tmp_path_factory.mktemp(f"readme-{request.param}")
    with database_url(request.param, data_dir) as url, LiveServer(data_dir, url) as live:
        yield live


def test_the_readme_first_loop_ends_with_a_paid_submission(fresh_server: LiveServer, tmp_path: Path) -> None:
    env = {**fresh_server.env, "BOUNTYBOARD_CONFIG_DIR": str(tmp_path / "config"),
           "BOUNTYBOARD_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "80"}
    env.pop("BOUNTYBOARD_API_KEY", None)
    env["PATH"] = os.environ.get("PATH", "")
    script = "set -euo pipefail\n" + first_loop()
    ran = subprocess.run(["bash", "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ops@example.com: balance 10.00" in ran.stdout, ran.stdout
    assert "pub@example.com: balance 15.00" in ran.stdout, ran.stdout
    assert "accepted" in ran.stdout
    assert "An old silent pond" in ran.stdout  # the reviewer read the work before accepting it
