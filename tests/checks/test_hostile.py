"""Hostile code run by a verifier, in the sandbox: each attack must fail, and the service must not notice.

Each attack's artifact prints PASS when it works (so the reward would be 1) and is run only sandboxed.
Where the test can, it first shows the attack would have a target (the listener answers this process,
the secret is a world-readable file, the outside directory is world-writable): what stops the artifact
is then the sandbox, not a permission. docs/checks.md records the same probes run once unsandboxed.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from bountyboard.checks.sandbox import SANDBOX_NICENESS, SANDBOX_UID_BASE, SANDBOX_UID_SPAN, Sandbox, processes_of
from bountyboard.checks.verifier import VerifierSpec, run_verifier
from tests.checks.support import run_artifact
from tests.support.server import LiveServer

pytestmark = pytest.mark.sandbox


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A host directory anyone may read and write (unlike pytest's tmp_path, which is private)."""
    path = Path(tempfile.mkdtemp(prefix="bb-hostile-"))
    os.chmod(path, 0o777)
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def sandbox_processes() -> list[int]:
    """Live processes with a sandbox uid (any run's)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uid = os.stat(entry.path).st_uid
            except OSError:
                continue
            if SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UID_SPAN:
                found.append(int(entry.name))
    return found


async def gone(find: Callable[[], list[int]], within: float = 3.0) -> list[int]:
    """What ``find`` still finds after ``within`` seconds (a killed namespace's processes are reaped
    by the kernel shortly after its first process ends)."""
    for _ in range(int(within / 0.1)):
        if not (found := find()):
            return found
        await asyncio.sleep(0.1)
    return find()


def processes_named(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker in Path(entry.path, "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_an_artifact_cannot_connect_to_a_loopback_listener(sandbox: Sandbox) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=2):  # the target is there
            listener.accept()[0].close()
        result = await run_artifact(sandbox, f"""
            (exec 3<>/dev/tcp/127.0.0.1/{port}) && echo PASS bash connected
            python3 -c "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('PASS py')"
            python3 -c "import socket; socket.create_connection(('localhost', {port}), timeout=2); print('PASS name')"
        """)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert result.status == "failed", (result.error, result.output_excerpt)
    assert result.rewards == [0.0]
    assert "PASS" not in result.output_excerpt
    assert "Connection refused" in result.output_excerpt


async def test_an_artifact_cannot_read_the_services_data_dir_or_secret_key(
        sandbox: Sandbox, open_dir: Path, server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = secrets.token_hex(16)
    key_file = open_dir / "secret.key"
    key_file.write_text(secret)
    os.chmod(key_file, 0o644)
    assert key_file.stat().st_mode & stat.S_IROTH  # readable by any user of the host
    monkeypatch.setenv("BOUNTYBOARD_SECRET_KEY", secret)  # as the service's own environment holds it
    database = server.data_dir / "bountyboard.db"
    result = await run_artifact(sandbox, f"""
        cat {key_file} && echo PASS key
        ls {open_dir} && echo PASS listed
        ls {server.data_dir} && echo PASS data dir
        head -c 16 {database} && echo PASS database
        env | grep -q {secret} && echo PASS env
        grep -rqs {secret} /etc /tmp /logs /proc/1/environ /proc/self/environ && echo PASS somewhere
        exit 0
    """)
    assert result.status == "failed", (result.error, result.output_excerpt)
    assert "PASS" not in result.output_excerpt
    assert secret not in result.output_excerpt
    assert "No such file or directory" in result.output_excerpt


async def test_an_artifact_cannot_write_outside_its_directory(sandbox: Sandbox, open_dir: Path) -> None:
    outside = open_dir / "planted"
    result = await run_artifact(sandbox, f"""
        echo x > {outside} && echo PASS outside
        echo x > /usr/planted && echo PASS usr
        echo x > /etc/planted && echo PASS etc
        echo x > /app/tests/planted && echo PASS tests
        echo x > /app/submission/planted && echo PASS submission
        echo x > /app/mine && echo own directory ok
        exit 0
    """)
    assert result.status == "failed", (result.error, result.output_excerpt)
    assert "PASS" not in result.output_excerpt
    assert "own directory ok" in result.output_excerpt
    assert not outside.exists()
    in_usr = Path("/usr") / "planted"
    assert not in_usr.exists()


async def test_an_artifact_is_killed_at_the_time_limit(sandbox: Sandbox) -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}"
    started = time.monotonic()
    result = await run_artifact(sandbox, f"(sleep {marker} &); setsid sleep {marker} & sleep {marker}; echo PASS",
                                timeout_sec=2, trials=3)
    elapsed = time.monotonic() - started
    assert result.status == "error"
    assert "time limit" in (result.error or "")
    assert len(result.trials) == 1  # the trials after an error are not run
    assert elapsed < 2 + 5
    assert await gone(lambda: processes_named(f"sleep {marker}")) == []


async def test_a_fork_bomb_is_contained(sandbox: Sandbox) -> None:
    most = 0

    async def count() -> None:
        nonlocal most
        while True:
            most = max(most, len(sandbox_processes()))
            await asyncio.sleep(0.05)

    counter = asyncio.create_task(count())
    started = time.monotonic()
    result = await run_artifact(sandbox, "bomb() { bomb | bomb & }; bomb; sleep 2; echo bombed", timeout_sec=4)
    elapsed = time.monotonic() - started
    counter.cancel()
    # Held to its process limit the bomb cannot grow; it ends, or the clock kills it.
    assert result.status in ("failed", "error"), result.as_json()
    assert 10 < most <= sandbox.limits.processes + 2  # it tried; bubblewrap's two processes count too
    assert elapsed < 4 + 5
    spawned = await asyncio.create_subprocess_exec("true")
    assert await spawned.wait() == 0  # the host can still start processes
    assert await gone(sandbox_processes) == []


async def test_a_gigabyte_of_output_is_contained(sandbox: Sandbox) -> None:
    spec = VerifierSpec(files={"test.sh": "head -c 1G /dev/zero | tr '\\0' x\n"}, timeoutSec=60)
    started = time.monotonic()
    result = await run_verifier(spec, {"resultType": "text", "content": ""}, sandbox=sandbox)
    assert result.status == "error"
    assert "output passed" in (result.error or "")
    assert len(result.output_excerpt) <= 2000
    assert time.monotonic() - started < 30  # stopped at the limit, not after a gigabyte


async def test_a_gigabyte_written_to_disk_is_contained(sandbox: Sandbox) -> None:
    result = await run_artifact(sandbox, """
        head -c 1G /dev/zero > /app/big; echo "app: $(stat -c %s /app/big)"
        head -c 1G /dev/zero > /tmp/big; echo "tmp: $(stat -c %s /tmp/big)"
        exit 0
    """)
    sizes = dict(line.split(": ") for line in result.output_excerpt.splitlines() if line[:4] in ("app:", "tmp:"))
    assert int(sizes["app"]) <= 64 << 20
    assert int(sizes["tmp"]) <= 64 << 20


def test_the_service_keeps_answering_healthz_meanwhile(sandbox: Sandbox, server: LiveServer) -> None:
    answers: list[tuple[int, float]] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            while not done.is_set():
                started = time.monotonic()
                answers.append((client.get("/healthz").status_code, time.monotonic() - started))
                time.sleep(0.1)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        async def hostile() -> None:
            await asyncio.gather(
                run_artifact(sandbox, "bomb() { bomb | bomb & }; bomb", timeout_sec=4),
                run_verifier(VerifierSpec(files={"test.sh": "cat /dev/zero"}, timeoutSec=10),
                             {"resultType": "text", "content": ""}, sandbox=sandbox),
                run_artifact(sandbox, "python3 -c 'x = bytearray(4 << 30)'; while :; do :; done", timeout_sec=4),
            )
        asyncio.run(hostile())
    finally:
        done.set()
        poller.join()
    assert len(answers) >= 10
    assert {status for status, _ in answers} == {200}
    assert max(seconds for _, seconds in answers) < 5
    assert processes_of(0) != []  # the test really looked at /proc


async def test_a_busy_artifact_weighs_less_than_the_service(sandbox: Sandbox) -> None:
    """The scheduler shares the CPU between sessions (autogroups) before niceness counts: the sandbox's
    session carries the sandbox's niceness, or eight busy checks would each weigh as much as the whole
    service (perf/checks_load.py: the list's p99 rose 15- to 36-fold with the session at niceness 0). The
    session has no controlling terminal either (field 7 of /proc/self/stat is 0)."""
    result = await run_artifact(sandbox, """
        echo "autogroup: $(cat /proc/self/autogroup)"
        echo "tty: $(cut -d ' ' -f 7 /proc/self/stat)"
    """)
    lines = dict(line.split(": ", 1) for line in result.output_excerpt.splitlines() if ": " in line)
    assert lines["autogroup"].endswith(f"nice {SANDBOX_NICENESS}"), result.output_excerpt
    assert lines["tty"] == "0"
