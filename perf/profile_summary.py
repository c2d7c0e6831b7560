"""Sums py-spy's collapsed stacks (``--format raw``) by function: the share of samples a function is on
the stack (inclusive) and at its top (self), the largest first.

    .venv/bin/python -m perf.profile_summary /tmp/prof/sqlite-cycle.txt [--top 40] [--match bountyboard]
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
        samples = int(count)
        frames = stack.split(";")
        total += samples
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
    return total, inclusive, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", default="", help="only frames whose text contains this")
    args = parser.parse_args()
    total, inclusive, own = summarise(args.path)
    print(f"{total} samples")
    for title, counter in (("inclusive", inclusive), ("self", own)):
        print(f"\n{title}:")
        chosen = [(frame, n) for frame, n in counter.most_common() if args.match in frame][: args.top]
        for frame, n in chosen:
            print(f"{n / total:6.1%}  {frame}")


if __name__ == "__main__":
    main()
