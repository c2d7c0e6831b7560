"""Model names as people write them, reduced to one key per model.

A model is named with its organisation: ``acme/calc-1`` and ``evil/calc-1`` are two models, and so
are two fine-tunes that share a base name. Within a name, case is folded and dots, underscores,
colons and spaces become ``-`` (``Anthropic/Claude-Sonnet-4.5`` is ``anthropic/claude-sonnet-4-5``).

A name without an organisation, or a vendor's dated snapshot, joins an organisation's model only
through the alias table shipped with the registry (``data/aliases.json``): ``claude-sonnet-4-5`` and
``claude-sonnet-4-5-20250929`` are ``anthropic/claude-sonnet-4-5``. A bare name the table does not
know is its own model, never merged into any organisation's.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from bountyboard.benchhub.registry import DATA_DIR

ALIASES_PATH = DATA_DIR / "aliases.json"

_SEPARATORS = re.compile(r"[\s._:]+")
_DASHES = re.compile(r"-{2,}")


def _fold(part: str) -> str:
    return _DASHES.sub("-", _SEPARATORS.sub("-", part.strip().lower())).strip("-")


def spelled_key(name: str) -> str:
    """The name folded segment by segment, organisation kept; no alias applied."""
    key = "/".join(part for part in map(_fold, name.split("/")) if part)
    return key or name.strip().lower()


@lru_cache
def alias_table() -> dict[str, str]:
    """alias -> model key, checked once: keys and targets already folded, targets ``org/name`` and
    never aliases themselves (a broken table fails loudly at the first lookup)."""
    table: dict[str, str] = json.loads(ALIASES_PATH.read_text())["aliases"]
    for alias, target in table.items():
        if spelled_key(alias) != alias or spelled_key(target) != target or target.count("/") != 1 or target in table:
            raise ValueError(f"{ALIASES_PATH}: {alias!r} -> {target!r} is not a folded alias of an org/name key")
    return table


def model_key(name: str) -> str:
    """The key runs and claims of one model share."""
    key = spelled_key(name)
    table = alias_table()
    if key in table:
        return table[key]
    # A vendor snapshot under its own organisation resolves as the bare snapshot does; under
    # another organisation it is that organisation's own model.
    organisation, _, bare = key.rpartition("/")
    target = table.get(bare)
    if organisation and target is not None and target.split("/")[0] == organisation:
        return target
    return key
