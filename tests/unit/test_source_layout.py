"""The size rule of the house (docs/architecture.md): no source module outside migrations over 400 lines,
so that a file that grows past one job is split by what it does before it is read as one."""

from __future__ import annotations

from pathlib import Path

import bountyboard

MOST_LINES = 400
PACKAGE = Path(bountyboard.__file__).parent


def test_no_module_outside_migrations_is_over_400_lines() -> None:
    sizes = {path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py") if "migrations" not in path.relative_to(PACKAGE).parts}
    assert len(sizes) > 100  # the package, not an empty folder
    assert {name: lines for name, lines in sizes.items() if lines > MOST_LINES} == {}
