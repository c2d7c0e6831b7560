"""The database's own rate for the statements of a claim + submit: the floor below the service.

``record_cycle`` runs the service in this process (Starlette's TestClient; no HTTP socket) on a fresh
database, seeds bots and arenas through its API, and records every statement (with its parameters, as
the driver receives them; and as the service built it) of one ``POST .../claim`` and one ``POST .../submit``
of a bot's second cycle: its steady state, the key check answered from what the process keeps, as for a bot
under wrk (a first cycle also read the key, a statement the service does not send again).
``replay`` then runs those statements with the bare driver (``sqlite3``; ``asyncpg`` on PostgreSQL), no
HTTP, no ORM, one connection per bot, each bot walking its own arenas as the service's cycle does, each
request's statements in one transaction (``BEGIN IMMEDIATE`` on SQLite, READ COMMITTED on PostgreSQL).

To replay a cycle as another bot on another arena, every id in the parameters is mapped: the recorded
bot, its key and the recorded arena to the replaying bot, its key and its next arena; ids the cycle
created (the claim's, the submission's, the events'...) to fresh ones of the same prefix, the same
within one cycle, so that the submit's statements find the claim's rows. Ids are found inside strings
too (an event's JSON payload names the claim).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event

if TYPE_CHECKING:
    from bountyboard.storage.engine import Database

ID = re.compile(r"\b[a-z]{2,6}_[0-9a-z]{26}\b")
HEX_KEY = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Statement:
    sql: str
    parameters: Any
    many: bool
    returned: list[tuple[Any, ...]] = field(default_factory=list)  # the rows of a RETURNING, as recorded
    # The statement as the service built it (None: sent as text) and its parameters before SQLAlchemy's
    # conversions, for the replay through the storage layer, which runs it as the service does.
    construct: Any = None
    bound: list[dict[str, Any]] = field(default_factory=list)


# Where the service began its unit of work (storage/unit_of_work.py): the statements before it ran
# outside any transaction (the key check), those after it in one, committed after the last.
BEGIN = Statement("BEGIN", None, False)


@dataclass
class Recording:
    """One claim's and one submit's statements, and what the replay maps in them."""

    claim: list[Statement]
    submit: list[Statement]
    bot_id: str
    key_id: str
    key_hash: str
    arena_id: str
    created: set[str] = field(default_factory=set)  # ids the recorded cycle made


@dataclass
class Bot:
    bot_id: str
    key_id: str
    key_hash: str
    api_key: str


def _env(url: str, data_dir: Path) -> dict[str, str]:
    return {"BOUNTYBOARD_DATA_DIR": str(data_dir), "BOUNTYBOARD_DATABASE_URL": url,
            "BOUNTYBOARD_BASE_URL": "http://perf", "BOUNTYBOARD_SECRET_KEY": "perf-" + uuid.uuid4().hex,
            "BOUNTYBOARD_RUN_DISPATCHER": "false", "BOUNTYBOARD_LOG_LEVEL": "WARNING",
            "BOUNTYBOARD_KEY_RATE_LIMIT": "100000000", "BOUNTYBOARD_ADMIN_EMAIL": "admin@perf.example",
            "BOUNTYBOARD_ADMIN_PASSWORD": "perf-admin-password"}


@contextlib.contextmanager
def prepared(url: str, data_dir: Path) -> Iterator[str]:
    """The service's settings for ``url`` in this process's environment, its database migrated, with an
    admin: yields an admin key with every scope. The settings are restored afterwards."""
    from bountyboard.accounts import service as accounts
    from bountyboard.accounts.scopes import KeyKind
    from bountyboard.cli.ops import bootstrap_admin, run_with_session
    from bountyboard.contract.scopes import Scope
    from bountyboard.storage.migrations import upgrade_database

    with _settings(url, data_dir):
        upgrade_database()
        run_with_session(bootstrap_admin)

        async def admin_key(session: Any) -> str:
            admin = await accounts.get_user_by_email(session, "admin@perf.example")
            return (await accounts.issue_key(session, admin, KeyKind.USER, list(Scope))).key

        yield run_with_session(admin_key)


@contextlib.contextmanager
def _settings(url: str, data_dir: Path) -> Iterator[None]:
    """The service's settings for ``url`` in this process's environment, restored afterwards."""
    from bountyboard.config import get_settings
    from bountyboard.storage.engine import set_database

    saved = dict(os.environ)
    os.environ.update(_env(url, data_dir))
    get_settings.cache_clear()
    try:
        yield
    finally:
        set_database(None)
        os.environ.clear()
        os.environ.update(saved)
        get_settings.cache_clear()


@contextlib.contextmanager
def _service(url: str, data_dir: Path) -> Iterator[Any]:
    """The app in this process on ``url`` (migrated), with an admin key: ``(client, admin headers)``."""
    from fastapi.testclient import TestClient

    from bountyboard.app import create_app

    with prepared(url, data_dir) as key, TestClient(create_app(), base_url="http://perf") as client:
        yield client, {"Authorization": f"Bearer {key}"}


def _ok(answer: Any) -> Any:
    if answer.status_code not in (200, 201):
        raise RuntimeError(f"{answer.request.method} {answer.request.url}: {answer.status_code} {answer.text}")
    return answer.json()


def _seed(client: Any, admin: dict[str, str], bots: int, arenas: int) -> tuple[list[str], list[str], list[str]]:
    """A funded publisher with ``arenas`` arenas of many slots, an operator with ``bots`` bots and a bot key
    each. Returns (bot ids, bot API keys, arena ids)."""
    publisher = _ok(client.post("/v1/admin/users", json={"email": "pub@perf.example", "role": "publisher"},
                                headers=admin))
    publisher_key = _ok(client.post(f"/v1/admin/users/{publisher['id']}/api-keys", headers=admin,
                                    json={"kind": "user", "scopes": ["tasks:publish"]}))["key"]
    _ok(client.post("/v1/admin/credit", json={"email": "pub@perf.example", "amount": 10_000_000}, headers=admin))
    as_publisher = {"Authorization": f"Bearer {publisher_key}"}
    arena_ids = []
    for index in range(arenas):
        task = _ok(client.post("/v1/tasks", headers=as_publisher,
                               json={"module": "arena", "title": f"arena {index}", "bountyAmount": 10,
                                     "maxClaims": 1000}))
        _ok(client.post(f"/v1/tasks/{task['id']}/publish", headers=as_publisher))
        arena_ids.append(task["id"])
    operator = _ok(client.post("/v1/admin/users", json={"email": "op@perf.example", "role": "operator"},
                               headers=admin))
    operator_key = _ok(client.post(f"/v1/admin/users/{operator['id']}/api-keys", headers=admin,
                                   json={"kind": "user", "scopes": ["agent:manage", "tasks:read", "tasks:claim",
                                                                    "claims:submit"]}))["key"]
    as_operator = {"Authorization": f"Bearer {operator_key}"}
    bot_ids, keys = [], []
    for index in range(bots):
        bot = _ok(client.post("/v1/agent/bots", json={"name": f"replay-{index}"}, headers=as_operator))
        bot_ids.append(bot["id"])
        keys.append(_ok(client.post("/v1/profile/api-keys", headers=as_operator, json={
            "kind": "bot", "botId": bot["id"], "scopes": ["tasks:read", "tasks:claim", "claims:submit"]}))["key"])
    return bot_ids, keys, arena_ids


def _bots(url: str, bot_ids: list[str], keys: list[str]) -> list[Bot]:
    """The seeded bots with their keys' ids and hashes, read back with the bare driver."""
    rows = _query(url, "SELECT bot_id, id, key_hash FROM api_keys WHERE bot_id IS NOT NULL")
    by_bot = {bot_id: (key_id, key_hash) for bot_id, key_id, key_hash in rows}
    return [Bot(bot_id, *by_bot[bot_id], api_key) for bot_id, api_key in zip(bot_ids, keys, strict=True)]


def _query(url: str, sql: str) -> list[tuple[Any, ...]]:
    if url.startswith("sqlite"):
        with contextlib.closing(sqlite3.connect(_sqlite_path(url))) as connection:
            return list(connection.execute(sql))

    async def read() -> list[tuple[Any, ...]]:
        import asyncpg

        connection = await asyncpg.connect(_asyncpg_dsn(url))
        try:
            return [tuple(row) for row in await connection.fetch(sql)]
        finally:
            await connection.close()

    return asyncio.run(read())


def _sqlite_path(url: str) -> str:
    return url.split(":///", 1)[1]


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


def _ids_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(ID.findall(value))
    if isinstance(value, (list, tuple)):
        return set().union(*(_ids_in(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return _ids_in(list(value.values()))
    return set()


def record_cycle(url: str, data_dir: Path, bots: int, arenas: int) -> tuple[Recording, list[Bot], list[str]]:
    """Seed ``bots`` bots and ``arenas`` arenas (plus two), then record one claim + submit of an extra bot, its
    second (its first, on an arena of its own, unrecorded). Returns the recording, the bots and the arenas
    for the replay."""
    from bountyboard.storage import unit_of_work
    from bountyboard.storage.engine import get_database

    with _service(url, data_dir) as (client, admin):
        bot_ids, keys, arena_ids = _seed(client, admin, bots + 1, arenas + 2)
        as_bot = {"Authorization": f"Bearer {keys[-1]}"}
        # One cycle first, unrecorded, on an arena of its own: the recorded one is the steady state's, the key
        # already known to the process (a bot under wrk has its key checked from what the process keeps).
        claim_id = _ok(client.post(f"/v1/agent/tasks/{arena_ids[-2]}/claim", headers=as_bot))["claimId"]
        _ok(client.post(f"/v1/agent/claims/{claim_id}/submit", headers=as_bot,
                        json={"resultType": "text", "content": "result of the cycle"}))
        recorded: list[Statement] = []

        def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
            if statement != "BEGIN IMMEDIATE":  # SQLite's begin, sent as a statement: BEGIN below stands for it
                compiled = context.compiled
                bound = [] if compiled is None else [_unexpanded(compiled, row) for row in context.compiled_parameters]
                recorded.append(Statement(statement, parameters, many, bound=bound,
                                          construct=None if compiled is None else context.invoked_statement))

        def returned(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
            # SQLAlchemy's adapters of both drivers hold a statement's rows in ``_rows`` until they are read.
            if " RETURNING " in statement and recorded and recorded[-1].sql == statement:
                recorded[-1].returned = [tuple(row) for row in getattr(cursor, "_rows", ())]

        def begin(session: Any, sqlite: bool, turn: Any) -> None:
            recorded.append(BEGIN)
            service_begin(session, sqlite, turn)

        engine = get_database().engine.sync_engine
        service_begin = unit_of_work._begin
        event.listen(engine, "before_cursor_execute", keep)
        event.listen(engine, "after_cursor_execute", returned)
        unit_of_work._begin = begin  # type: ignore[attr-defined]
        try:
            claim_id = _ok(client.post(f"/v1/agent/tasks/{arena_ids[-1]}/claim", headers=as_bot))["claimId"]
            claimed = len(recorded)
            _ok(client.post(f"/v1/agent/claims/{claim_id}/submit", headers=as_bot,
                            json={"resultType": "text", "content": "result of the cycle"}))
        finally:
            unit_of_work._begin = service_begin  # type: ignore[attr-defined]
            event.remove(engine, "before_cursor_execute", keep)
            event.remove(engine, "after_cursor_execute", returned)
    every_bot = _bots(url, bot_ids, keys)
    known = {bot_id for bot_id, in _query(url, "SELECT id FROM bots")} | {
        user_id for user_id, in _query(url, "SELECT id FROM users")} | {
        key_id for key_id, in _query(url, "SELECT id FROM api_keys")} | set(arena_ids)
    recorder = every_bot[-1]
    recording = Recording(recorded[:claimed], recorded[claimed:], recorder.bot_id, recorder.key_id,
                          recorder.key_hash, arena_ids[-1])
    recording.created = set().union(*(_ids_in(s.parameters) for s in recorded)) - known
    return recording, every_bot[:-1], arena_ids[:-2]


def _unexpanded(compiled: Any, bound: dict[str, Any]) -> dict[str, Any]:
    """A statement's compiled parameters as it takes them: a list for each ``IN`` parameter, which the compiled
    parameters hold expanded into one value per item (``users_1``, ``users_2`` for ``users``)."""
    bound = dict(bound)
    for parameter, name in compiled.bind_names.items():
        if parameter.expanding and name not in bound:
            items = itertools.takewhile(lambda key: key in bound, (f"{name}_{n}" for n in itertools.count(1)))
            bound[name] = [bound.pop(key) for key in list(items)]
    return bound


def _fresh(created: str) -> str:
    from ulid import ULID

    return f"{created.split('_', 1)[0]}_{str(ULID()).lower()}"


class Mapper:
    """The parameters of a recorded statement as one bot's cycle on one arena would send them; a number a
    RETURNING gave back (an event's position) is mapped to what the replayed statement gave back
    (``returned``)."""

    def __init__(self, recording: Recording, bot: Bot, arena_id: str) -> None:
        self.swaps = {recording.bot_id: bot.bot_id, recording.key_id: bot.key_id,
                      recording.key_hash: bot.key_hash, recording.arena_id: arena_id}
        self.swaps.update({created: _fresh(created) for created in recording.created})
        self.pattern = re.compile("|".join(re.escape(old) for old in self.swaps))
        self.numbers: dict[int, int] = {}

    def returned(self, statement: Statement, rows: list[Any]) -> None:
        for recorded, replayed in zip(statement.returned, rows, strict=True):
            for old, new in zip(recorded, tuple(replayed), strict=True):
                if isinstance(old, int) and not isinstance(old, bool):
                    self.numbers[old] = new

    def __call__(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return self.numbers.get(value, value)
        if isinstance(value, str):
            return self.pattern.sub(lambda match: self.swaps[match.group(0)], value)
        if isinstance(value, tuple):
            return tuple(self(item) for item in value)
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {name: self(item) for name, item in value.items()}
        return value


@dataclass
class ReplayFigure:
    cycles: int
    seconds: float
    client_cpu_seconds: float  # this process's CPU time while replaying: the driver loop's own cost

    @property
    def rate(self) -> float:
        return self.cycles / self.seconds


def replay(url: str, recording: Recording, bots: list[Bot], arenas: list[str], seconds: float) -> ReplayFigure:
    """Each bot, on its own connection, replays cycles on its next arena for ``seconds``."""
    started_cpu = time.process_time()
    started = time.perf_counter()
    if url.startswith("sqlite"):
        cycles = _replay_sqlite(_sqlite_path(url), recording, bots, arenas, seconds)
    else:
        cycles = asyncio.run(_replay_postgresql(_asyncpg_dsn(url), recording, bots, arenas, seconds))
    return ReplayFigure(cycles, time.perf_counter() - started, time.process_time() - started_cpu)


def _replay_sqlite(path: str, recording: Recording, bots: list[Bot], arenas: list[str], seconds: float) -> int:
    from bountyboard.storage.sqlite_checkpoints import Checkpointer
    from bountyboard.storage.sqlite_driver import CONNECTION_PRAGMAS

    stop_at = time.perf_counter() + seconds
    counts = [0] * len(bots)

    def bot_loop(index: int) -> None:
        # The service's connection settings and checkpoints (storage/sqlite_driver.py, sqlite_checkpoints.py);
        # a busy timeout stands for its retries. Left to SQLite's automatic checkpoints, 16 writers' log grew
        # past 500 MB in a run, every read slower for it.
        connection = sqlite3.connect(path, isolation_level=None, timeout=30)
        for pragma in CONNECTION_PRAGMAS:
            connection.execute(pragma)
        for arena in arenas:
            if time.perf_counter() >= stop_at:
                break
            mapped = Mapper(recording, bots[index], arena)
            for statements in (recording.claim, recording.submit):
                for statement in statements:
                    if statement is BEGIN:
                        connection.execute("BEGIN IMMEDIATE")
                    elif statement.many:
                        connection.executemany(statement.sql, [mapped(row) for row in statement.parameters])
                    else:
                        rows = connection.execute(statement.sql, mapped(statement.parameters)).fetchall()
                        if statement.returned:
                            mapped.returned(statement, rows)
                connection.execute("COMMIT")
            counts[index] += 1
        connection.close()

    threads = [threading.Thread(target=bot_loop, args=(index,)) for index in range(len(bots))]
    checkpointer = Checkpointer(Path(path))
    checkpointer.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    checkpointer.stop()
    return sum(counts)


async def _replay_postgresql(dsn: str, recording: Recording, bots: list[Bot], arenas: list[str],
                             seconds: float) -> int:
    import asyncpg

    stop_at = time.perf_counter() + seconds

    async def bot_loop(bot: Bot) -> int:
        connection = await asyncpg.connect(dsn)
        done = 0
        try:
            for arena in arenas:
                if time.perf_counter() >= stop_at:
                    break
                mapped = Mapper(recording, bot, arena)
                for statements in (recording.claim, recording.submit):
                    transaction = connection.transaction(isolation="read_committed")
                    for statement in statements:
                        if statement is BEGIN:
                            await transaction.start()
                        elif statement.many:
                            await connection.executemany(statement.sql, [mapped(row) for row in statement.parameters])
                        else:
                            rows = await connection.fetch(statement.sql, *mapped(statement.parameters))
                            if statement.returned:
                                mapped.returned(statement, rows)
                    await transaction.commit()
                done += 1
        finally:
            await connection.close()
        return done

    return sum(await asyncio.gather(*(bot_loop(bot) for bot in bots)))


def replay_through_storage(url: str, data_dir: Path, recording: Recording, bots: list[Bot], arenas: list[str],
                           seconds: float) -> ReplayFigure:
    """The same cycles through the service's own storage layer, in one process as the service runs them: its
    engine and pool (``storage.engine.Database``), a request session per request, the unit of work's
    ``begin`` (on SQLite this process's writer turn) and the session's commit, each statement in one trip
    through SQLAlchemy's greenlet as ``unit_of_work.core`` makes it: the statement the service built, with the
    parameters it was given, so that each execution pays what it pays in the service (the compiled cache's
    lookup, the parameters' and the rows' conversions). SQLAlchemy's engine and its asyncio adaptation, without
    the ORM's loading of objects, the flows or HTTP. Between the bare driver's rate and the service's, it shows
    which of the two layers the cost lies in. (Given as the driver's text, ``exec_driver_sql``, the same
    statements skipped the cache and the conversions and ran 1.1 to 1.8 times as fast: docs/performance.md.)"""
    from bountyboard.config import get_settings
    from bountyboard.storage.engine import Database

    started_cpu = time.process_time()
    started = time.perf_counter()
    with _settings(url, data_dir):
        cycles = asyncio.run(_replay_storage(Database(get_settings()), recording, bots, arenas, seconds))
    return ReplayFigure(cycles, time.perf_counter() - started, time.process_time() - started_cpu)


async def _replay_storage(database: Database, recording: Recording, bots: list[Bot], arenas: list[str],
                          seconds: float) -> int:
    from bountyboard.storage.unit_of_work import begin

    stop_at = time.perf_counter() + seconds

    def run(statement: Statement, mapped: Mapper) -> Any:
        def on_connection(sync: Any) -> list[Any]:
            connection = sync.connection()
            if statement.construct is None:
                parameters = ([mapped(row) for row in statement.parameters] if statement.many
                              else mapped(statement.parameters))
                result = connection.exec_driver_sql(statement.sql, parameters)
            else:
                bound = [mapped(row) for row in statement.bound]
                result = connection.execute(statement.construct, bound if statement.many else bound[0])
            return result.fetchall() if result.returns_rows else []
        return on_connection

    async def bot_loop(bot: Bot) -> int:
        done = 0
        for arena in arenas:
            if time.perf_counter() >= stop_at:
                break
            mapped = Mapper(recording, bot, arena)
            for statements in (recording.claim, recording.submit):
                async with database.request_sessionmaker() as session:
                    for statement in statements:
                        if statement is BEGIN:
                            await begin(session)
                            continue
                        rows = await session.run_sync(run(statement, mapped))
                        if statement.returned:
                            mapped.returned(statement, rows)
                    await session.commit()
            done += 1
        return done

    try:
        return sum(await asyncio.gather(*(bot_loop(bot) for bot in bots)))
    finally:
        await database.dispose()
