"""Operating commands (DESIGN.md section 10): serve, worker, db upgrade, admin ..."""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts import service as accounts
from bountyboard.accounts.scopes import KeyKind, Role
from bountyboard.config import get_settings
from bountyboard.contract.scopes import Scope
from bountyboard.errors import ErrorCode, Problem
from bountyboard.events.testdns import install as install_test_resolver
from bountyboard.ledger.money import format_money
from bountyboard.requestlog import configure_logging
from bountyboard.storage.engine import get_database, set_database
from bountyboard.storage.migrations import upgrade_database

console = Console()
err_console = Console(stderr=True)
T = TypeVar("T")

db_app = typer.Typer(help="Database maintenance.", no_args_is_help=True)
admin_app = typer.Typer(help="Administration on the configured database (with or without a running server).",
                        no_args_is_help=True)


def run_with_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run one piece of database work in its own event loop, as one unit of work (the command is its edge:
    the flows only flush, the work is committed here), and release the engine afterwards."""

    async def runner() -> T:
        try:
            async with get_database().sessionmaker() as session:
                result = await work(session)
                await session.commit()
                return result
        finally:
            await get_database().dispose()
            set_database(None)

    try:
        return asyncio.run(runner())
    except Problem as problem:
        err_console.print(f"[red]error:[/red] {problem.detail}")
        raise typer.Exit(1) from problem


async def bootstrap_admin(session: AsyncSession) -> None:
    """On an empty database, create the first admin from the environment or with a generated password."""
    if await accounts.count_users(session) > 0:
        return
    settings = get_settings()
    email = settings.admin_email or "admin@localhost"
    password = settings.admin_password.get_secret_value() if settings.admin_password else secrets.token_urlsafe(18)
    try:
        await accounts.create_user(session, email, Role.ADMIN, password, "Administrator")
    except Problem as problem:
        if problem.code == ErrorCode.EMAIL_TAKEN:  # another replica starting at the same moment won the race
            return
        raise
    if not settings.admin_password:
        # Plain output, never wrapped or coloured, so that scripts can read it from the log.
        typer.echo(f"Created the first admin: {email}  password: {password}\n"
                   "This password is printed once; change it after logging in.")


def advertise_listening_address(host: str, port: int) -> None:
    """Without BOUNTYBOARD_BASE_URL, every advertised URL (manifest, skill.md, OpenAPI servers, site links)
    names the address served; server processes started by uvicorn inherit it through the environment."""
    if os.environ.get("BOUNTYBOARD_BASE_URL"):
        return
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # a wildcard is not an address to call
    os.environ["BOUNTYBOARD_BASE_URL"] = f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"
    get_settings.cache_clear()


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(help="Server processes (PostgreSQL only for more than one).")] = 1,
) -> None:
    """Run the API, the site and the in-process webhook worker."""
    import uvicorn

    advertise_listening_address(host, port)
    configure_logging()
    upgrade_database()
    run_with_session(bootstrap_admin)
    settings = get_settings()
    if not settings.is_sqlite and not settings.secret_key:
        err_console.print("[yellow]warning:[/yellow] BOUNTYBOARD_SECRET_KEY is not set; the secret kept in "
                          f"{settings.data_dir} is used, and every replica must share it or keys fail elsewhere.")
    if workers > 1 and settings.is_sqlite:
        err_console.print("[red]error:[/red] several server processes need PostgreSQL (BOUNTYBOARD_DATABASE_URL).")
        raise typer.Exit(2)
    console.print(f"bountyboard listening on http://{host}:{port} (database: "
                  f"{'SQLite' if settings.is_sqlite else 'PostgreSQL'})")
    # X-Forwarded-For / -Proto only from the proxies named in BOUNTYBOARD_TRUSTED_PROXIES (uvicorn would
    # otherwise believe them from 127.0.0.1, and per-address limits would yield to a forged header).
    trusted = settings.trusted_proxies.strip()
    uvicorn.run("bountyboard.app:create_app", factory=True, host=host, port=port, workers=workers,
                log_level=settings.log_level.lower(), access_log=False, timeout_graceful_shutdown=20,
                proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None)


def worker() -> None:
    """Deliver webhooks and run expiry sweeps, without serving HTTP (for scale-out)."""
    import signal

    from bountyboard.events.delivery.dispatcher import Dispatcher
    from bountyboard.events.doorbell import doorbell
    from bountyboard.worker import periodic_jobs, run_background_jobs

    configure_logging()
    upgrade_database()
    install_test_resolver(get_settings())  # nothing unless a test deployment names a hosts file

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        dispatcher = Dispatcher(get_database(), get_settings(), doorbell)
        typer.echo(f"bountyboard worker running: {', '.join(job.name for job in periodic_jobs(dispatcher))}")
        try:
            await run_background_jobs(stop, dispatcher)
        finally:
            await get_database().dispose()

    asyncio.run(main())


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply pending migrations."""
    upgrade_database()
    console.print("database is up to date")


@db_app.command("reencrypt")
def db_reencrypt() -> None:
    """Encrypt stored secrets again under the current BOUNTYBOARD_SECRET_KEY (after a rotation, with the
    replaced one in BOUNTYBOARD_PREVIOUS_SECRET_KEY)."""
    from bountyboard.events.webhooks import reencrypt_secrets

    upgrade_database()
    count = run_with_session(reencrypt_secrets)
    console.print(f"re-encrypted the signing secrets of {count} webhook subscriptions")


@admin_app.command("create-user")
def create_user(
    email: str,
    role: Annotated[Role, typer.Option(help="operator, publisher, reviewer or admin")] = Role.OPERATOR,
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin.")] = False,
) -> None:
    """Create a user; without --password-stdin a password is generated and printed once."""
    password = sys.stdin.readline().rstrip("\r\n") if password_stdin else secrets.token_urlsafe(18)
    upgrade_database()
    user = run_with_session(lambda session: accounts.create_user(session, email, role, password))
    console.print(f"created {user.role} {user.email} ({user.id})")
    if not password_stdin:
        typer.echo(f"password: {password}  (printed once)")


@admin_app.command("create-key")
def create_key(
    email: str,
    scopes: Annotated[str, typer.Option(help="Comma-separated scopes, e.g. tasks:read,tasks:claim")],
    bot: Annotated[str | None, typer.Option(help="Name of the user's bot the key acts as (created if new).")] = None,
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
) -> None:
    """Create an API key and print it (only the key, for automation)."""
    try:
        wanted = [Scope(scope.strip()) for scope in scopes.split(",") if scope.strip()]
    except ValueError as exc:
        err_console.print(f"[red]error:[/red] {exc}; scopes are: {', '.join(s.value for s in Scope)}")
        raise typer.Exit(2) from exc
    upgrade_database()

    async def work(session: AsyncSession) -> str:
        user = await accounts.get_user_by_email(session, email)
        if user is None:
            raise Problem(404, ErrorCode.NOT_FOUND, f"No user with the email {email}.")
        bot_id = None
        if bot:
            existing = [b for b in await accounts.list_bots(session, user.id) if b.name == bot]
            bot_id = existing[0].id if existing else (await accounts.create_bot(session, user, bot)).id
        created = await accounts.issue_key(session, user, KeyKind.BOT if bot else KeyKind.USER, wanted,
                                           bot_id=bot_id, name=name)
        return created.key

    typer.echo(run_with_session(work))


@admin_app.command("credit")
def credit(
    email: str,
    amount: Annotated[str, typer.Argument(help="Amount in currency units, e.g. 250 or 19.99.")],
    memo: Annotated[str, typer.Option(help="A note kept on the ledger entry.")] = "admin deposit",
) -> None:
    """Deposit AMOUNT into the balance of the user with EMAIL."""
    from bountyboard.ledger import service as ledger

    upgrade_database()
    result = run_with_session(lambda session: ledger.credit(session, email, ledger.to_cents(amount), memo))
    console.print(f"credited {email}: balance {format_money(result.balance)}")


@admin_app.command("balance")
def balance(email: str) -> None:
    """Print the balance of the user with EMAIL (what a publisher can spend, what an operator has earned)."""
    from bountyboard.ledger import service as ledger

    upgrade_database()
    result = run_with_session(lambda session: ledger.balance_by_email(session, email))
    console.print(f"{email}: balance {format_money(result.balance)}")
