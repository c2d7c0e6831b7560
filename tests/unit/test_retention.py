"""The purges of rows that keep themselves until a time (storage/retention.py), on a migrated SQLite file:
only rows whose ``expires_at`` has come go, and only from the table named."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from bountyboard.clock import now
from bountyboard.idempotency import IdempotencyRecord
from bountyboard.site.models import WebSession
from bountyboard.storage.migrations import upgrade_database
from bountyboard.storage.retention import delete_expired


def record(scope_hash: str, expires_in: timedelta) -> IdempotencyRecord:
    return IdempotencyRecord(scope_hash=scope_hash, fingerprint="f", locked_until=now(),
                             expires_at=now() + expires_in, created_at=now())


def web_session(token_hash: str, expires_in: timedelta) -> WebSession:
    return WebSession(id=token_hash, token_hash=token_hash, user_id="usr_absent", csrf_token="c",
                      expires_at=now() + expires_in)


@pytest.fixture
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('retention') / 'db.sqlite'}"
    upgrade_database(url)
    return url


async def test_only_rows_past_their_time_go_and_only_from_the_table_named(database_url: str) -> None:
    engine = create_async_engine(database_url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    hour = timedelta(hours=1)
    async with sessions() as session, session.begin():
        session.add_all([record("gone-1", -hour), record("gone-2", -timedelta(seconds=1)), record("kept", hour),
                         web_session("expired-browser", -hour)])
    async with sessions() as session, session.begin():
        assert await delete_expired(session, IdempotencyRecord.expires_at) == 2
    async with sessions() as session, session.begin():
        assert await delete_expired(session, IdempotencyRecord.expires_at) == 0
        kept = (await session.execute(select(IdempotencyRecord.scope_hash))).scalars().all()
        browsers = (await session.execute(select(WebSession.token_hash))).scalars().all()
    assert kept == ["kept"] and browsers == ["expired-browser"]
    await engine.dispose()
