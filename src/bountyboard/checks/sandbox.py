"""Run untrusted code (a publisher's verifier, an agent's artifact) inside bubblewrap, with rlimits.

What a caller can rely on (docs/checks.md says what is and is not isolated):

* the command runs as an unprivileged user (a fresh uid per run when this process is root, else this
  process's own uid) in new user, mount, PID, network, IPC, UTS and cgroup namespaces: no network
  at all (only a loopback of its own), no other process visible, no capability;
* it sees a read-only ``/usr`` (and the ``/bin``, ``/lib*`` links to it), a handful of ``/etc``
  files, its own ``/proc`` and a minimal ``/dev``, a size-bounded ``/tmp``, and only the directories
  the caller mounts (``Mount``); nothing else of the host (no data directory, no home, no ``/work``);
* limits: wall-clock time (the whole namespace is killed at ``timeout_sec``), address space, processes,
  file size, open files, CPU seconds, and the bytes of output kept (the run is stopped past it);
* a sandbox that cannot be set up (bubblewrap missing, a mount refused) ends ``error`` and the
  command never runs: there is no unsandboxed fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

BWRAP = "bwrap"
PRLIMIT = "prlimit"
# Uids handed to sandboxed runs when this process is root: a range no host account uses, one uid per
# run, so one run's process count (RLIMIT_NPROC is per uid) never starves another's.
SANDBOX_UID_BASE = 1_600_000
SANDBOX_UID_SPAN = 1_000_000
# The host files under /etc a shell and an interpreter need; nothing else of /etc is shown.
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types")
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
PATH = "/usr/local/bin:/usr/bin:/bin"
# Written by the sandbox's first process just before it execs the command: proof that the sandbox was
# set up. Without it the run is an ``error``, whatever bubblewrap's exit status says.
_STARTED = b"sandbox-started"
_CHUNK = 65536
_REAP_SEC = 5.0


class Outcome(StrEnum):
    EXITED = "exited"  # the command ran to its end; see exit_code
    TIMEOUT = "timeout"  # killed at the wall-clock limit
    OUTPUT_LIMIT = "output_limit"  # killed when its output passed the limit
    ERROR = "error"  # the sandbox could not be set up: the command did not run


@dataclass(frozen=True)
class Limits:
    timeout_sec: float = 60.0
    memory_bytes: int = 1 << 30  # RLIMIT_AS of every process
    processes: int = 64  # RLIMIT_NPROC of the run's uid
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 256
    tmp_bytes: int = 64 << 20  # size of the private /tmp (a tmpfs)
    output_bytes: int = 1 << 20  # stdout and stderr together; past it the run is stopped


@dataclass(frozen=True)
class Mount:
    """A host directory shown inside the sandbox at ``target``; read-only unless ``writable``."""

    source: Path
    target: str
    writable: bool = False

    def bwrap_argv(self) -> list[str]:
        return ["--bind" if self.writable else "--ro-bind", str(self.source), self.target]


@dataclass(frozen=True)
class SandboxResult:
    outcome: Outcome
    exit_code: int | None
    output: bytes  # the first ``output_bytes`` of stdout and stderr, interleaved as written
    duration_ms: int
    error: str | None = None  # why the sandbox could not be set up (``Outcome.ERROR``)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.EXITED and self.exit_code == 0


@dataclass(frozen=True)
class Sandbox:
    """The settings every run shares; ``run`` is the one operation."""

    limits: Limits = field(default_factory=Limits)
    bwrap: str = BWRAP

    def available(self) -> str | None:
        """None when bubblewrap and prlimit are installed, else what is missing."""
        for tool in (self.bwrap, PRLIMIT):
            if shutil.which(tool) is None:
                package = "bubblewrap" if tool == self.bwrap else "util-linux"
                return f"{tool} is not installed (Debian package {package})"
        return None

    async def run(self, command: Sequence[str], *, mounts: Sequence[Mount] = (), cwd: str = "/",
                  env: Mapping[str, str] | None = None, limits: Limits | None = None) -> SandboxResult:
        limits = limits or self.limits
        started = time.monotonic()
        missing = self.available()
        if missing:
            return _error(started, missing)
        uid = _sandbox_uid()
        for mount in mounts:
            if not mount.source.is_dir():
                return _error(started, f"mount source {mount.source} is not a directory")
            if mount.writable and uid != os.getuid():
                _hand_over(mount.source, uid)
        read_fd, write_fd = os.pipe()
        argv = [*_prlimit_argv(limits), *_bwrap_argv(self.bwrap, mounts, cwd, env or {}, limits, write_fd),
                "/bin/bash", "-c", f'printf {_STARTED.decode()} >&{write_fd} && exec {write_fd}>&- && exec "$@"',
                "bash", *command]
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, pass_fds=(write_fd,),
                # bubblewrap's own processes (the sandbox's pid 1 among them, whose /proc/1/environ the
                # command can read) get no variable of this process: the service's secrets stay out.
                env={"PATH": PATH}, preexec_fn=functools.partial(_become, uid))
        except OSError as exc:
            os.close(read_fd)
            os.close(write_fd)
            return _error(started, f"could not start bubblewrap: {exc}")
        os.close(write_fd)
        outcome = Outcome.ERROR
        try:
            outcome, output = await _collect(process, limits)
        finally:
            _kill(process, uid, stragglers=outcome is not Outcome.EXITED)
            with contextlib.suppress(TimeoutError):  # killed: its exit is near; never wait unbounded
                await asyncio.wait_for(_reap(process), _REAP_SEC)
        marker = _read_all(read_fd)
        duration_ms = int((time.monotonic() - started) * 1000)
        if marker != _STARTED and outcome is Outcome.EXITED:
            message = output.decode(errors="replace").strip()[-500:] or "bubblewrap exited before the command ran"
            return SandboxResult(Outcome.ERROR, process.returncode, output, duration_ms,
                                 f"the sandbox could not be set up: {message}")
        exit_code = process.returncode if outcome is Outcome.EXITED else None
        return SandboxResult(outcome, exit_code, output, duration_ms)


def _error(started: float, message: str) -> SandboxResult:
    return SandboxResult(Outcome.ERROR, None, b"", int((time.monotonic() - started) * 1000), message)


SANDBOX_NICENESS = 10
# Linux's scheduler shares the CPU between sessions before it looks at niceness (autogroups): a
# sandbox in a session of its own weighs as much as the whole service, whatever its niceness. The
# session's own niceness is written here; a kernel without autogroups has no such file.
_AUTOGROUP = Path("/proc/self/autogroup")


def _become(uid: int) -> None:
    """In the child before it executes: a session of its own, which is also a process group (killed
    as one) with no controlling terminal (nothing typed into the server's terminal: what bubblewrap's
    ``--new-session`` is for); a lower CPU priority for that session and this process (the service
    keeps answering while checks run); the run's uid with no supplementary group. A ``preexec_fn``
    rather than ``process_group``/``user``: uvloop, the server's event loop, takes neither."""
    os.setsid()
    with contextlib.suppress(OSError):
        _AUTOGROUP.write_text(str(SANDBOX_NICENESS))
    os.nice(SANDBOX_NICENESS)
    if uid != os.getuid():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def _sandbox_uid() -> int:
    if os.getuid() != 0:
        return os.getuid()  # unprivileged already: bubblewrap maps this uid into its user namespace
    return SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN)


def _hand_over(path: Path, uid: int) -> None:
    """A writable mount belongs to the run's uid (it may write there and nowhere else of the host)."""
    os.chown(path, uid, uid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def _prlimit_argv(limits: Limits) -> list[str]:
    cpu = max(1, int(limits.timeout_sec) + 1)
    return [PRLIMIT, f"--as={limits.memory_bytes}", f"--nproc={limits.processes}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}", "--core=0", f"--cpu={cpu}", "--"]


def _bwrap_argv(bwrap: str, mounts: Sequence[Mount], cwd: str, env: Mapping[str, str], limits: Limits,
                keep_fd: int) -> list[str]:
    argv = [bwrap, "--unshare-user", "--unshare-all", "--disable-userns", "--die-with-parent",
            "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for name in ROOT_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), f"/{name}"]
    for name in ETC_ENTRIES:
        if (Path("/etc") / name).exists():
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    for mount in mounts:
        argv += mount.bwrap_argv()
    argv += ["--remount-ro", "/"]  # the root bubblewrap built (/etc, the mount points) is read-only too
    argv += ["--chdir", cwd, "--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp",
             "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    del keep_fd  # bubblewrap leaves inherited descriptors open; the start marker closes its own
    return [*argv, "--"]


async def _collect(process: asyncio.subprocess.Process, limits: Limits) -> tuple[Outcome, bytes]:
    """Read the output until the command ends, the time is up or the output passes its limit."""
    assert process.stdout is not None
    kept = bytearray()
    stream = process.stdout

    async def read() -> Outcome:
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                await process.wait()
                return Outcome.EXITED
            room = limits.output_bytes - len(kept)
            kept.extend(chunk[:room])
            if len(chunk) > room:
                return Outcome.OUTPUT_LIMIT

    try:
        outcome = await asyncio.wait_for(read(), timeout=limits.timeout_sec)
    except TimeoutError:
        outcome = Outcome.TIMEOUT
    return outcome, bytes(kept)


def _kill(process: asyncio.subprocess.Process, uid: int, *, stragglers: bool) -> None:
    """Kill bubblewrap and everything it started: its pid namespace dies with its first process
    (``--die-with-parent``); the process group too and, after a run stopped early with a uid of its
    own, any process left with that uid."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    if stragglers and uid != os.getuid():
        for pid in processes_of(uid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Read what is left of the output (asyncio reports the exit only once the pipe is closed, and a
    run stopped early left its reader paused), then wait for the exit."""
    assert process.stdout is not None
    while await process.stdout.read(_CHUNK):
        pass
    await process.wait()


def processes_of(uid: int) -> list[int]:
    """The pids of live processes whose real uid is ``uid`` (read from /proc)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(entry.path).st_uid == uid:
                found.append(int(entry.name))
    return found


def _read_all(fd: int) -> bytes:
    try:
        os.set_blocking(fd, False)
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(fd, 1024):
                data += chunk
        return data
    finally:
        os.close(fd)
