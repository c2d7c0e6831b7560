"""Summarise a py-spy profile in collapsed-stack form (``py-spy record --format raw``).

Prints, for the functions of this project and the libraries under them, the share of samples a
function is on the stack (inclusive) and at the top of it (self), the largest first.

    .venv/bin/python -m perf.profile_top PROFILE.txt [--top 40] [--match bountyboard]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path


def summarise(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    total = 0
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        frames = stack.split(";")
        total += samples
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
    return total, inclusive, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", default="", help="only frames containing this text")
    args = parser.parse_args()
    total, inclusive, own = summarise(args.profile)
    print(f"{total} samples")
    for title, counter in (("inclusive", inclusive), ("self", own)):
        print(f"\n{title}:")
        shown = [(frame, n) for frame, n in counter.most_common() if args.match in frame][: args.top]
        for frame, samples in shown:
            print(f"{100 * samples / max(total, 1):6.2f}%  {frame}")


if __name__ == "__main__":
    main()
