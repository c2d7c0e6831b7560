"""The Alembic history (``bountyboard/migrations``, one branch per domain): applied, and checked at start."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from filelock import FileLock
from sqlalchemy import make_url

from bountyboard.config import get_settings

MIGRATIONS_DIR = Path(__file__).parent.parent / "migrations"


def alembic_config(url: str | None = None) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url or get_settings().effective_database_url)
    return config


def upgrade_database(url: str | None = None) -> None:
    """Apply every pending migration (all heads: each domain keeps its own branch)."""
    from alembic import command

    settings = get_settings()
    if url is None and settings.is_sqlite:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    url = url or settings.effective_database_url
    private_sqlite_files(url)
    with _migration_lock(url):
        command.upgrade(alembic_config(url), "heads")
        _empty_sqlite_wal(url)


def _empty_sqlite_wal(url: str) -> None:
    """Copy the write-ahead log into the database and truncate it: frames of pages a migration
    rewrote (secrets once kept in clear) would otherwise linger in it until overwritten."""
    path = sqlite_path(url)
    if path is None or not Path(f"{path}-wal").exists():
        return
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # best effort: busy readers leave it for later


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL; None for PostgreSQL or an in-memory database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def private_sqlite_files(url: str) -> None:
    """The SQLite database readable by its owner only: created 0600 before SQLite opens it (SQLite
    gives its -wal and -shm files the database file's mode), and an older file tightened."""
    path = sqlite_path(url)
    if path is None:
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(FileNotFoundError):
            file.chmod(0o600)


def _migration_lock(url: str) -> contextlib.AbstractContextManager[object]:
    """Processes starting together migrate one after the other. On SQLite a file lock beside the
    database; PostgreSQL takes an advisory lock inside the migration transaction (migrations/env.py)."""
    path = sqlite_path(url)
    if path is None:
        return contextlib.nullcontext()
    return FileLock(f"{path}.migrate.lock", mode=0o600)


@lru_cache
def _migration_scripts() -> Any:
    """The migration history (read once: the files do not change while running)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def pending_migrations(applied: Iterable[str]) -> set[str]:
    """The heads of this code's history that the applied versions do not cover yet.

    Alembic keeps only the newest applied revision of each branch; a revision that another one
    depends on counts as applied once its dependant is.
    """
    from alembic.util import CommandError

    scripts = _migration_scripts()
    known = []
    for revision in applied:
        try:
            scripts.get_revision(revision)
            known.append(revision)
        except CommandError:  # applied by a newer release: not ours to judge
            continue
    covered = {script.revision for script in scripts.revision_map.iterate_revisions(tuple(known), "base")}
    return set(scripts.get_heads()) - covered
