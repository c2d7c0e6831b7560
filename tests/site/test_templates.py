"""Every template compiles (a syntax error would otherwise surface only on the page that uses it)."""

from __future__ import annotations

import pytest

from bountyboard.site.render import build_environment

pytestmark = pytest.mark.in_process


def test_every_template_compiles() -> None:
    environment = build_environment()
    names = environment.list_templates()
    assert "base.html" in names and "partials/artifact.html" in names
    for name in names:
        environment.get_template(name)
