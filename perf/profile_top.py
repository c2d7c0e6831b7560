"""py-spy profiles of a server under load: recorded around a block (``recording``), and summarised.

The summary reads collapsed stacks (``py-spy record --format raw``). By function: the share of samples
a function is on the stack (inclusive) and at its top (self), the largest first. With ``--packages``:
the self share of each library (``sqlalchemy/orm``, ``asyncpg``, ...) and of each of this service's
modules, which shows where a request's CPU goes even where the stacks are cut (SQLAlchemy's asyncio
runs statements in greenlets, whose frames py-spy records without their callers).

    .venv/bin/python -m perf.profile_top PROFILE.txt [--top 40] [--match bountyboard]
    .venv/bin/python -m perf.profile_top PROFILE.txt --packages
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

_FILE = re.compile(r"\(([^:()]+):\d+\)$")
# Libraries shown by subpackage (the ORM apart from the engine); others by their top-level name.
_SPLIT = {"sqlalchemy", "starlette", "fastapi", "pydantic", "uvicorn"}


@contextlib.contextmanager
def recording(pid: int, directory: Path | None, name: str) -> Iterator[None]:
    """py-spy recording process ``pid`` while the block runs, into ``directory/name.txt`` as collapsed
    stacks; nothing without ``directory``. py-spy comes from the venv (``pip install py-spy``)."""
    if directory is None:
        yield
        return
    directory.mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    recorder = subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "200", "--nonblocking",
                                 "--format", "raw", "--output", str(directory / f"{name}.txt")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)  # py-spy writes what it recorded when interrupted
        recorder.wait(timeout=60)


def _stacks(path: Path) -> Iterator[tuple[list[str], int]]:
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            yield stack.split(";"), int(count)


def _package(frame: str) -> str:
    match = _FILE.search(frame)
    parts = (match.group(1) if match else frame).split("/")
    if parts[0] == "bountyboard":
        return "/".join(parts[:3])
    return "/".join(parts[:2]) if parts[0] in _SPLIT else parts[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", default="", help="only frames containing this text")
    parser.add_argument("--packages", action="store_true", help="self samples summed by library and module")
    args = parser.parse_args()
    total = 0
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for frames, samples in _stacks(args.profile):
        total += samples
        if args.packages:
            own[_package(frames[-1])] += samples
            continue
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
    print(f"{total} samples")
    tables = (("self, by library and module", own),) if args.packages else (("inclusive", inclusive), ("self", own))
    for title, counter in tables:
        print(f"\n{title}:")
        shown = [(frame, n) for frame, n in counter.most_common() if args.match in frame][: args.top]
        for frame, samples in shown:
            print(f"{100 * samples / max(total, 1):6.2f}%  {frame}")


if __name__ == "__main__":
    main()
