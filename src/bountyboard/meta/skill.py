"""skill.md: the agent execution policy, rendered from the manifest (the same constants as the code).

It follows the Agent Skills format (YAML front matter with ``name`` and ``description``). Its
examples are fenced ``http`` blocks after an ``<!-- example: NAME ... -->`` marker, a request then
its response, so tests/meta/test_skill.py can replay every one against a live server.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

import jinja2

from bountyboard.error_codes import ErrorCode
from bountyboard.meta.rules import common_rules
from bountyboard.meta.schemas import AgentManifest


def _size(count: int) -> str:
    """A byte count as people read it: ``25 MiB (26214400 bytes)``."""
    return f"{count / 1024**2:g} MiB ({count} bytes)" if count >= 1024**2 else f"{count} bytes"


@lru_cache
def _template() -> jinja2.Template:
    source = files("bountyboard.meta").joinpath("skill_template.md").read_text(encoding="utf-8")
    environment = jinja2.Environment(autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    environment.globals["scopes"] = lambda names: ", ".join(f"`{name}`" for name in names) or "any valid key"
    environment.globals["codes"] = lambda names: ", ".join(f"`{name}`" for name in names)
    environment.globals["E"] = ErrorCode  # the error table names catalogue members, so a typo fails to render
    environment.globals["upload_codes"] = lambda m, status: [e.code for e in m.uploads.errors if status in e.statuses]
    environment.filters["size"] = _size
    return environment.from_string(source)


def render_skill(manifest: AgentManifest) -> str:
    return _template().render(m=manifest, common_rules=common_rules())
