"""Every module is described once (market.modules.MODULE_TEXTS), in the manifest and on the publish form alike."""

from __future__ import annotations

from bountyboard.market.modules import MODULE_TEXTS, Module
from bountyboard.meta.manifest import modules
from bountyboard.site.pages.publish import MODULE_HINTS


def test_every_module_has_its_purpose_in_the_manifest_and_its_hint_on_the_publish_form() -> None:
    assert set(MODULE_TEXTS) == set(Module)
    assert {info.name: info.purpose for info in modules()} == {m.value: MODULE_TEXTS[m].purpose for m in Module}
    assert {m.value: MODULE_TEXTS[m].hint for m in Module} == MODULE_HINTS
    assert all(text.purpose and text.hint for text in MODULE_TEXTS.values())
