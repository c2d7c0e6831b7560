"""The embedded database and the data directory's files are readable by their owner only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.support.api import Admin
from tests.support.server import LiveServer


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_sqlite_files_and_the_generated_secret_are_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"  # created by the server
    database = data_dir / "bountyboard.db"
    # No BOUNTYBOARD_SECRET_KEY: the server generates one and keeps it in the data directory.
    with LiveServer(data_dir, f"sqlite+aiosqlite:///{database}", env={"BOUNTYBOARD_SECRET_KEY": None}) as server:
        admin = Admin.of(server)
        assert admin.http.get("/v1/profile").status_code == 200  # the write-ahead log is in use
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm"), data_dir / "secret_key",
                 Path(f"{database}.migrate.lock")]
        assert {path.name: oct(_mode(path)) for path in files} == {path.name: oct(0o600) for path in files}
