"""Rich tables of the CLI: user text printed literally, ids never wrapped or cut (they are copied)."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.table import Table
from rich.text import Text

# Prefixed ULIDs (task_..., clm_..., bot_...) and API key ids: what a reader copies into the next command.
_ID = re.compile(r"^[a-z]{2,5}_[0-9a-z]{26}$")


def _is_id_column(values: list[Any]) -> bool:
    shown = [str(value) for value in values if value not in (None, "")]
    return bool(shown) and all(_ID.match(value) for value in shown)


def table(title: str, columns: list[str], rows: list[list[Any]]) -> Table:
    """A table whose id columns keep their full width; other columns fold to fit the terminal."""
    result = Table(title=Text(title), title_justify="left")
    for index, column in enumerate(columns):
        values = [row[index] for row in rows]
        if _is_id_column(values):
            result.add_column(column, no_wrap=True, overflow="ignore",
                              min_width=max(len(str(value)) for value in values if value))
        else:
            result.add_column(column, overflow="fold")
    for row in rows:
        result.add_row(*[Text("" if cell is None else str(cell)) for cell in row])  # user text, never markup
    return result


def fields(title: str, record: dict[str, Any]) -> Table:
    """One record as field/value rows; a value that is an id is never wrapped."""
    result = Table(title=Text(title), title_justify="left", show_header=False)
    result.add_column("field", style="bold", no_wrap=True)
    longest_id = max((len(str(value)) for value in record.values() if isinstance(value, str) and _ID.match(value)),
                     default=0)
    result.add_column("value", overflow="fold", min_width=longest_id)
    for name, value in record.items():
        text = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
        result.add_row(name, Text("" if value is None else text))
    return result
