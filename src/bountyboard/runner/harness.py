"""``bench run <org>/<name>@<rev> --benchmark SLUG``: hand a registry reference to the ``harbor`` CLI.

Harbor runs the tasks in Docker or a cloud sandbox and writes ``<jobs-dir>/<job-name>/``. This
module only builds the command, runs it, and tags the finished job directory with the benchmark
slug (``bountyboard.json``), so that ``bench push`` can upload it without ``--benchmark``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bountyboard.runner.harbor import JOB_TAG_FILE, JobTag, write_json

# Exit code when the harbor CLI is not installed (documented in docs/bench.md).
EXIT_HARBOR_MISSING = 4
HARBOR_INSTALL_HELP = (
    "The harbor CLI is not installed. Harbor needs Python >= 3.12 and Docker (or a cloud sandbox such as "
    "Daytona or Modal). Install it with `uv tool install harbor` (or `pip install harbor` in a Python 3.12 "
    "environment), check `harbor --version`, then run this command again."
)
# Harbor's registry references, as `harbor run -d` takes them: [<org>/]<name>@<rev>.
_REF = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*@[A-Za-z0-9][\w.-]*$")


def is_harbor_ref(value: str) -> bool:
    """``[org/]name@rev`` that is not an existing local path."""
    return bool(_REF.match(value)) and not Path(value).exists()


@dataclass
class HarborRun:
    ref: str
    benchmark: str
    agent: str
    model: str | None
    attempts: int
    concurrency: int
    jobs_dir: Path
    job_name: str
    environment: str | None = None  # harbor's -e: a type (docker, daytona, ...) or module:Class
    include_tasks: list[str] = field(default_factory=list)  # glob patterns of task names
    exclude_tasks: list[str] = field(default_factory=list)
    n_tasks: int | None = None
    registry_path: Path | None = None  # a local Harbor registry.json instead of Harbor's own

    def command(self, harbor: str = "harbor") -> list[str]:
        args = [harbor, "run", "-d", self.ref, "-a", self.agent]
        if self.registry_path is not None:
            args += ["--registry-path", str(self.registry_path)]
        if self.model:
            args += ["-m", self.model]
        if self.environment:
            args += ["-e", self.environment]
        for pattern in self.include_tasks:
            args += ["-i", pattern]
        for pattern in self.exclude_tasks:
            args += ["-x", pattern]
        if self.n_tasks is not None:
            args += ["-l", str(self.n_tasks)]
        return [*args, "--n-attempts", str(self.attempts), "--n-concurrent", str(self.concurrency),
                "--jobs-dir", str(self.jobs_dir), "--job-name", self.job_name]

    def execute(self) -> int:
        """Run harbor (its output goes straight to the terminal); tag the job; return harbor's exit code."""
        harbor = shutil.which("harbor")
        if harbor is None:
            raise FileNotFoundError(HARBOR_INSTALL_HELP)
        code = subprocess.run(self.command(harbor), check=False).returncode
        job_dir = self.jobs_dir / self.job_name
        if job_dir.is_dir():
            name, _, revision = self.ref.partition("@")
            tag = JobTag(benchmark=self.benchmark, model=self.model, agent=self.agent, harness="harbor",
                         n_attempts=self.attempts, dataset_ref=name, dataset_revision=revision or None)
            write_json(job_dir / JOB_TAG_FILE, tag.model_dump(mode="json"))
        return code
