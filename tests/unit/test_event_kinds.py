"""The payload models of the event kinds: every kind has one, emit() takes no other, and docs/webhooks.md
lists the models' fields."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.events.kinds import ALL_KINDS, MODELS, PUBLIC_KINDS, ClaimEndedData, EventData, EventKind
from bountyboard.events.service import emit

DOCS = Path(__file__).resolve().parents[2] / "docs"
WEBHOOKS_DOC = DOCS / "webhooks.md"
LIFECYCLE_DOC = DOCS / "lifecycle.md"


def _literal_values(model: type[EventData]) -> set[str]:
    return {str(value) for field in model.model_fields.values()
            if typing.get_origin(field.annotation) is typing.Literal for value in typing.get_args(field.annotation)}


def _documented_names(text: str) -> set[str]:
    return {name for quoted in re.findall(r"`([^`]*)`", text) for name in re.findall(r"[A-Za-z0-9]+", quoted)}


def test_every_kind_has_a_model_and_the_public_kinds_lead() -> None:
    assert set(MODELS) == set(EventKind)
    assert ALL_KINDS[:len(PUBLIC_KINDS)] == PUBLIC_KINDS


async def test_emit_refuses_a_payload_of_another_kind() -> None:
    released = ClaimEndedData(taskId="task_1", claimId="clm_1", botId=None, operatorId="usr_1", status="released",
                              module="translate")
    with pytest.raises(TypeError, match=r"ClaimEndedData is not a payload of task\.expired"):
        await emit(cast(AsyncSession, None), EventKind.TASK_EXPIRED, released)


def test_the_documented_public_payloads_are_the_models() -> None:
    doc = WEBHOOKS_DOC.read_text()
    for kind in PUBLIC_KINDS:
        [row] = [line for line in doc.splitlines() if line.startswith(f"| `{kind.value}` |")]
        data_column = row.split("|")[3]
        [model] = MODELS[kind]
        assert _documented_names(data_column) - _literal_values(model) == set(model.model_fields), kind


def test_the_documented_webhook_payloads_are_the_models() -> None:
    doc = " ".join(WEBHOOKS_DOC.read_text().split())
    for kind in (EventKind.WEBHOOK_ENDPOINT_DISABLED, EventKind.WEBHOOK_TEST):
        [listed] = re.findall(rf"`{re.escape(kind.value)}` \((`[^)]*`)\)", doc)
        [model] = MODELS[kind]
        assert _documented_names(listed) == set(model.model_fields), kind


def test_the_lifecycle_event_table_lists_every_kind_with_its_models_fields() -> None:
    rows = [line for line in LIFECYCLE_DOC.read_text().split("## Events", 1)[1].split("\n## ", 1)[0].splitlines()
            if line.startswith("| `")]
    listed: set[EventKind] = set()
    for row in rows:
        kinds_column, _, data_column = row.strip("|").split("|")
        kinds = [EventKind(kind) for kind in re.findall(r"`([^`]+)`", kinds_column)]
        fields = {name for kind in kinds for model in MODELS[kind] for name in model.model_fields}
        assert set(re.findall(r"[A-Za-z0-9]+", data_column)) - {"and", "or"} == fields, row
        listed.update(kinds)
    assert listed == set(EventKind) - {EventKind.WEBHOOK_ENDPOINT_DISABLED, EventKind.WEBHOOK_TEST}
