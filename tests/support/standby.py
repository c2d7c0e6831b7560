"""A PostgreSQL primary and its streaming standby, each on its own loopback port, for the read-replica tests.

The shared server at 127.0.0.1:5432 allows no replication connection (its pg_hba.conf names no
``replication`` database) and changing that is not this test's to do, so the test makes its own primary
with ``initdb`` and its standby with ``pg_basebackup -R`` (which writes ``standby.signal`` and the
connection to the primary), in a directory of its own, as the ``postgres`` user when run as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg2

from tests.support.server import free_port

_HBA = "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory with initdb, pg_ctl and pg_basebackup, if any."""
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(Path(d).parent.name),
                            reverse=True):
        if all((Path(directory) / tool).exists() for tool in ("initdb", "pg_ctl", "pg_basebackup")):
            return Path(directory)
    return None


def missing() -> str | None:
    """Why the standby cannot be made here, or None."""
    if binaries() is None:
        return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root with no postgres user to run initdb as"
    return None


@dataclass
class Pair:
    primary_port: int
    standby_port: int

    def url(self, port: int, database: str = "bb") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{port}/{database}"

    def connect(self, port: int) -> psycopg2.extensions.connection:
        connection = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="bb")
        connection.autocommit = True
        return connection

    def caught_up(self, timeout: float = 30.0) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        with contextlib.closing(self.connect(self.primary_port)) as primary, \
                contextlib.closing(self.connect(self.standby_port)) as standby:
            with primary.cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_lsn()")
                target = cursor.fetchone()[0]
            deadline = time.monotonic() + timeout
            while True:
                with standby.cursor() as cursor:
                    cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,))
                    if cursor.fetchone()[0]:
                        return
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.05)

    def replay(self, paused: bool) -> None:
        with contextlib.closing(self.connect(self.standby_port)) as standby, standby.cursor() as cursor:
            cursor.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


def _run(*command: str | Path) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, *map(str, command)], check=True, capture_output=True, timeout=120)


@contextlib.contextmanager
def primary_and_standby() -> Iterator[Pair]:
    """A fresh primary with a database ``bb``, and its hot standby, stopped and removed afterwards."""
    bin_dir = binaries()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="bb-standby-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    pair = Pair(free_port(), free_port())
    primary, standby = root / "primary", root / "standby"
    started: list[Path] = []
    try:
        _run(bin_dir / "initdb", "-D", primary, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        (primary / "pg_hba.conf").write_text(_HBA)
        for data, port in ((primary, pair.primary_port), (standby, pair.standby_port)):
            if data == standby:
                _run(bin_dir / "pg_basebackup", "-h", "127.0.0.1", "-p", str(pair.primary_port), "-U", "postgres",
                     "-D", standby, "-R", "-X", "stream", "-c", "fast", "--no-sync")
            options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c wal_level=replica -c fsync=off"
            _run(bin_dir / "pg_ctl", "-D", data, "-o", options, "-l", root / f"{data.name}.log", "-w", "start")
            started.append(data)
            if data == primary:
                with contextlib.closing(psycopg2.connect(host="127.0.0.1", port=port, user="postgres",
                                                         dbname="postgres")) as connection:
                    connection.autocommit = True
                    connection.cursor().execute("CREATE DATABASE bb")
        yield pair
    finally:
        for data in reversed(started):
            with contextlib.suppress(subprocess.SubprocessError):
                _run(bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
