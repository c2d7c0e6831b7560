"""A real bountyboard server in a subprocess, on loopback, on SQLite or PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

POSTGRES_ADMIN_DSN = os.environ.get("BOUNTYBOARD_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin-password-for-tests"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_available() -> bool:
    try:
        import psycopg2

        psycopg2.connect(POSTGRES_ADMIN_DSN, connect_timeout=2).close()
        return True
    except Exception:
        return False


def backends() -> list[str]:
    """SQLite always; PostgreSQL whenever this machine's server answers."""
    wanted = os.environ.get("BOUNTYBOARD_TEST_BACKENDS")
    if wanted:
        return [name.strip() for name in wanted.split(",") if name.strip()]
    return ["sqlite", "postgresql"] if postgres_available() else ["sqlite"]


@contextlib.contextmanager
def database_url(backend: str, data_dir: Path) -> Iterator[str]:
    """A fresh, empty database for one server (a new PostgreSQL database, dropped afterwards)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{data_dir / 'bountyboard.db'}"
        return
    import psycopg2

    name = f"bb_test_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(POSTGRES_ADMIN_DSN)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def psycopg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


class LiveServer:
    """``bountyboard serve`` as a child process. ``env`` adds or overrides settings (None removes one);
    ``python`` is the interpreter whose installation serves (this one by default)."""

    def __init__(self, data_dir: Path, db_url: str, env: dict[str, str | None] | None = None,
                 python: str = sys.executable) -> None:
        self.python = python
        self.data_dir = data_dir
        self.db_url = db_url
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        merged: dict[str, str | None] = {
            **os.environ,
            "BOUNTYBOARD_DATA_DIR": str(data_dir),
            "BOUNTYBOARD_DATABASE_URL": db_url,
            "BOUNTYBOARD_BASE_URL": self.base_url,
            "BOUNTYBOARD_ADMIN_EMAIL": ADMIN_EMAIL,
            "BOUNTYBOARD_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "BOUNTYBOARD_SECRET_KEY": "test-secret-key-" + uuid.uuid4().hex,
            "BOUNTYBOARD_WEBHOOK_ALLOW_PRIVATE": "true",
            "BOUNTYBOARD_ENABLE_TEST_CLOCK": "true",
            "BOUNTYBOARD_LOG_LEVEL": "WARNING",
            # No probation (market.eligibility) unless a test asks for it: most tests' bots are new.
            "BOUNTYBOARD_PROBATION_OUTCOMES": "0",
            **(env or {}),
        }
        self.env = {name: value for name, value in merged.items() if value is not None}
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / f"server-{self.port}.log"

    @property
    def backend(self) -> str:
        return "sqlite" if self.db_url.startswith("sqlite") else "postgresql"

    def run_cli(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a ``bountyboard`` command against this server's database, whatever its outcome."""
        return subprocess.run([self.python, "-m", "bountyboard", *args], env=self.env, input=input,
                              capture_output=True, text=True, timeout=120)

    def cli(self, *args: str, input: str | None = None) -> str:
        """Run a ``bountyboard`` command against this server's database; its output, or an error."""
        result = self.run_cli(*args, input=input)
        if result.returncode != 0:
            raise RuntimeError(f"bountyboard {' '.join(args)} failed: {result.stderr}{result.stdout}")
        return result.stdout

    def start(self, timeout: float = 120.0) -> LiveServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [self.python, "-m", "bountyboard", "serve", "--port", str(self.port)],
            env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log_path.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.base_url + "/readyz", timeout=2).status_code == 200:
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"server did not become ready:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
