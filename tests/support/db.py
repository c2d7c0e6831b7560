"""Looking straight into a live server's database, from outside the service (read-only).

Tests use it to prove what the HTTP answers cannot show: that nothing was written, or that a
secret is stored nowhere in clear.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.support.server import LiveServer, psycopg_dsn

Snapshot = dict[str, list[tuple[Any, ...]]]
# PostgreSQL's relation extension lock: held while one page is added to a table's file, so concurrent INSERTs
# into any one table meet it now and then. It is no row and no counter; samplers looking for writers queued
# on a shared row leave it out.
PAGE_ALLOCATION_WAIT = "extend"


def _sqlite_path(server: LiveServer) -> Path:
    return Path(server.db_url.split(":///", 1)[1])


def table_rows(server: LiveServer, ignore_columns: dict[str, set[str]] | None = None) -> Snapshot:
    """Every row of every table (Alembic's bookkeeping aside), as sorted tuples of text."""
    ignore_columns = ignore_columns or {}
    snapshot: Snapshot = {}
    if server.backend == "sqlite":
        connection = sqlite3.connect(f"file:{_sqlite_path(server)}?mode=ro", uri=True)
        try:
            tables = [row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
            for table in tables:
                cursor = connection.execute(f'SELECT * FROM "{table}"')
                snapshot[table] = _rows(table, cursor.description, cursor.fetchall(), ignore_columns)
        finally:
            connection.close()
    else:
        import psycopg2

        connection = psycopg2.connect(psycopg_dsn(server.db_url))
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                tables = [row[0] for row in cursor.fetchall()]
                for table in tables:
                    cursor.execute(f'SELECT * FROM "{table}"')
                    snapshot[table] = _rows(table, cursor.description, cursor.fetchall(), ignore_columns)
            connection.rollback()
        finally:
            connection.close()
    snapshot.pop("alembic_version", None)
    return snapshot


def _rows(table: str, description: Any, rows: list[Any], ignore_columns: dict[str, set[str]]) -> list[tuple[Any, ...]]:
    names = [column[0] for column in description]
    skipped = ignore_columns.get(table, set())
    kept = [index for index, name in enumerate(names) if name not in skipped]
    return sorted((tuple(_text(row[index]) for index in kept) for row in rows), key=repr)


def _text(value: Any) -> Any:
    if isinstance(value, memoryview):
        return bytes(value)
    return value if isinstance(value, bytes | int | float | str | bool | type(None)) else str(value)


def stored_bytes(server: LiveServer) -> bytes:
    """Everything the database holds, as bytes to search: the SQLite files themselves (database,
    write-ahead log), or every value of every row of every PostgreSQL table."""
    if server.backend == "sqlite":
        path = _sqlite_path(server)
        return b"".join(Path(f"{path}{suffix}").read_bytes() for suffix in ("", "-wal", "-journal")
                        if Path(f"{path}{suffix}").exists())
    # Raw values, not the table's text rendering, so a bytea column is searched as the bytes it holds.
    values = [value for rows in table_rows(server).values() for row in rows for value in row]
    return b"\n".join(value if isinstance(value, bytes) else str(value).encode() for value in values)
