"""Rich tables of the CLI: user text printed literally, ids never wrapped or cut (they are copied)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from bountyboard.ledger.money import MONEY_FIELDS, format_money

# Prefixed ULIDs (task_..., clm_..., bot_...) and API key ids: what a reader copies into the next command.
_ID = re.compile(r"^[a-z]{2,5}_[0-9a-z]{26}$")


def _is_id_column(values: list[Any]) -> bool:
    shown = [str(value) for value in values if value not in (None, "")]
    return bool(shown) and all(_ID.match(value) for value in shown)


# Below this width a non-id column is not worth showing squeezed: the rows are shown as records instead.
_MIN_COLUMN = 8


class Listing:
    """Rows as a table when it fits the terminal with every id whole and room for the rest; otherwise one
    field/value record per row (still with ids whole), rather than columns squeezed to nothing."""

    def __init__(self, title: str, columns: list[str], rows: list[list[Any]], whole: Collection[str] = ()) -> None:
        self.title, self.columns, self.rows, self.whole = title, columns, rows, whole

    def _id_widths(self) -> list[int | None]:
        widths: list[int | None] = []
        for index, column in enumerate(self.columns):
            values = [row[index] for row in self.rows]
            kept = (column in self.whole or _is_id_column(values)) and any(values)
            widths.append(max(len(str(value)) for value in values if value) if kept else None)
        return widths

    def _table(self, id_widths: list[int | None]) -> Table:
        result = Table(title=Text(self.title), title_justify="left")
        for column, width in zip(self.columns, id_widths, strict=True):
            if width is not None:
                result.add_column(column, no_wrap=True, overflow="ignore", min_width=width)
            else:
                result.add_column(column, overflow="fold")
        for row in self.rows:
            result.add_row(*[Text("" if cell is None else str(cell)) for cell in row])  # user text, never markup
        return result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        id_widths = self._id_widths()
        needed = sum(width if width is not None else max(_MIN_COLUMN, len(column))
                     for column, width in zip(self.columns, id_widths, strict=True)) + 3 * len(self.columns) + 1
        if needed <= options.max_width or not self.rows:
            yield self._table(id_widths)
            return
        yield Text(self.title)
        for row in self.rows:
            yield fields("", dict(zip(self.columns, row, strict=True)))


def table(title: str, columns: list[str], rows: list[list[Any]], whole: Collection[str] = ()) -> Listing:
    """Rows under ``columns``; ids, and the columns named in ``whole`` (other names a reader copies, such as a
    benchmark's slug), are never wrapped or cut."""
    return Listing(title, columns, rows, whole)


def fields(title: str, record: Mapping[str, Any]) -> Table:
    """One record as field/value rows; a value that is an id is never wrapped."""
    result = Table(title=Text(title) if title else None, title_justify="left", show_header=False)
    result.add_column("field", style="bold", no_wrap=True)
    longest_id = max((len(str(value)) for value in record.values() if isinstance(value, str) and _ID.match(value)),
                     default=0)
    result.add_column("value", overflow="fold", min_width=longest_id)
    for name, value in record.items():
        if name in MONEY_FIELDS and isinstance(value, int | float):
            value = format_money(value)
        text = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
        result.add_row(name, Text("" if value is None else text))
    return result


def checks_summary(checks: Mapping[str, Any]) -> str:
    """A submission's checks in one line: outcome, rules passed, the verifier's mean reward and interval."""
    parts = [f"{checks.get('status')} ({'binding' if checks.get('binding') else 'advisory'})"]
    rules = checks.get("rules") or []
    if rules:
        parts.append(f"rules {sum(1 for rule in rules if rule.get('passed'))}/{len(rules)} passed")
    verifier = checks.get("verifier") or {}
    if verifier.get("meanReward") is not None:
        interval = verifier.get("interval") or {}
        parts.append(f"verifier mean reward {verifier['meanReward']:.3g} "
                     f"[{interval.get('low', 0):.3g}, {interval.get('high', 0):.3g}] over {verifier.get('trials')} "
                     f"trial(s) in {verifier.get('durationMs')} ms")
    return "; ".join(parts)


def with_checks_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's fields with its checks as a summary line and the end of the verifier's output."""
    shown = dict(record)
    checks = shown.pop("checks", None)
    if checks:
        shown["checks"] = checks_summary(checks)
        excerpt = ((checks.get("verifier") or {}).get("outputExcerpt") or "").strip()
        failed = [f"{rule['kind']}: {rule['message']}" for rule in checks.get("rules") or [] if not rule["passed"]]
        if failed:
            shown["failedRules"] = "; ".join(failed)
        if excerpt:
            shown["checkOutput"] = excerpt[-400:]
    return shown
