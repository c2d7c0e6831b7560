"""A Harbor environment that runs a trial as host processes, for machines without a container engine.

Give it to Harbor with ``harbor run -e bountyboard.runner.hostenv:HostEnvironment`` from a Python
that has both Harbor and this package on its path (``scripts/harbor.sh`` sets up ``.venv-harbor``
that way). It is imported by Harbor only: nothing else in bountyboard imports it, so bountyboard
itself never needs Harbor installed.

Each environment owns a private directory with ``app/ logs/ tests/ solution/ tmp/``. Every
command runs under ``unshare --mount`` (root only) in a mount namespace of its own, where those
directories are bound over ``/app /logs /tests /solution /tmp``: the paths a Harbor task expects
exist for that command alone, and trials running at once (or one after another) never see each
other's files. The empty mount points are created at the filesystem root once. Uploads and
downloads are plain copies into and out of the private directory.

This is no sandbox: the agent and verifier run as root on the host (a task's user is not
switched to), with its network and its tools (``python3``, ``bash``); ``environment/Dockerfile``
is not built. It serves tasks whose tests need nothing beyond the host, such as the tasks
``bountyboard bench pull`` writes.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.trial.paths import EnvironmentPaths

# /tmp last: the private directories themselves live under the host's /tmp.
MOUNTED_ROOTS = ("app", "logs", "tests", "solution", "tmp")
# Bind the private directories (positional arguments, so no path is ever re-quoted), then run the
# command with bash as Harbor's Docker environment does.
_NAMESPACE_SCRIPT = f"""\
set -e
sandbox=$1; cwd=$2; command=$3
for root in {" ".join(MOUNTED_ROOTS)}; do
    mount --bind "$sandbox/$root" "/$root"
done
cd "$cwd"
exec bash -c "$command"
"""


class HostEnvironment(BaseEnvironment):
    """``BaseEnvironment`` whose ``exec`` runs on the host in a private mount namespace."""

    @staticmethod
    def type() -> str:
        return "bountyboard-host"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self) -> None:
        if os.geteuid() != 0:
            raise RuntimeError("HostEnvironment binds directories in a mount namespace: run harbor as root")
        if shutil.which("unshare") is None:
            raise RuntimeError("HostEnvironment needs `unshare` (util-linux)")

    @property
    def sandbox(self) -> Path:
        if not hasattr(self, "_sandbox"):
            self._sandbox = Path(tempfile.mkdtemp(prefix=f"harbor-{self.session_id}-"))
        return self._sandbox

    def host_path(self, path: str | PurePosixPath) -> Path:
        """Where an environment path lives on the host; only the mounted roots exist."""
        posix = PurePosixPath(path)
        parts = posix.parts
        if not posix.is_absolute() or len(parts) < 2 or parts[1] not in MOUNTED_ROOTS or ".." in parts:
            raise ValueError(f"{path} is outside {', '.join('/' + root for root in MOUNTED_ROOTS)}")
        return self.sandbox.joinpath(*parts[1:])

    def _make_dirs(self) -> None:
        for root in MOUNTED_ROOTS:
            (self.sandbox / root).mkdir(parents=True, exist_ok=True)
            Path("/", root).mkdir(exist_ok=True)  # the mount point, left empty on the host
        (self.sandbox / "tmp").chmod(0o1777)
        # What a container image gets from Harbor's mounts: the log directories it writes to.
        paths = EnvironmentPaths()
        for log_dir in (paths.agent_dir, paths.verifier_dir, paths.artifacts_dir):
            self.host_path(log_dir).mkdir(parents=True, exist_ok=True)

    async def start(self, force_build: bool) -> None:
        self._make_dirs()

    async def stop(self, delete: bool) -> None:
        if delete:
            shutil.rmtree(self.sandbox, ignore_errors=True)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self.host_path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self.host_path(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.host_path(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        shutil.copytree(self.host_path(source_dir), target_dir, dirs_exist_ok=True)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        # `user` is not honoured: every command runs as root (see the module's docstring).
        workdir = cwd or self.task_env_config.workdir or "/app"
        process = await asyncio.create_subprocess_exec(
            "unshare", "--mount", "--propagation", "private", "--", "bash", "-c", _NAMESPACE_SCRIPT,
            "harbor-host-exec", str(self.sandbox), workdir, command,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(self._merge_env(env) or {})}, start_new_session=True,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_sec)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            # The message Harbor's Docker environment gives, so timeouts read the same in its logs.
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
        return ExecResult(stdout=stdout.decode(errors="replace"), stderr=stderr.decode(errors="replace"),
                          return_code=process.returncode if process.returncode is not None else -1)
