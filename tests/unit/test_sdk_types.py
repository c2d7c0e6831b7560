"""The SDK's wire types (client/types.py) against the OpenAPI document's component schemas.

Each SDK type stands for one or more schemas (a webhook with or without its secret): its fields are
the union of their properties, required exactly when every schema requires them, with the same
simple JSON types. A field added, dropped or retyped on one side only fails here.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any, Literal, NotRequired

import pytest

from bountyboard.app import create_app
from bountyboard.client import types as sdk
from bountyboard.contract.artifacts import ArtifactType

# SDK type -> the component schemas it stands for.
SHAPES: dict[str, tuple[str, ...]] = {
    "Bot": ("BotOut",),
    "Operator": ("UserOut",),
    "ActorLimits": ("bountyboard__accounts__schemas__Limits",),
    "ActorContext": ("ActorContext",),
    "Task": ("AgentTask",),
    "TaskPage": ("KeysetPage_AgentTask_",),
    "ClaimCreated": ("ClaimCreated",),
    "ClaimStatus": ("AgentClaimStatus",),
    "ClaimBond": ("ClaimBond",),
    "ClaimPage": ("KeysetPage_AgentClaimStatus_",),
    "Attachment": ("Attachment",),
    "Upload": ("UploadOut",),
    "VerifierArchive": ("VerifierArchiveOut",),
    "DownloadLink": ("DownloadLink",),
    "SubmissionReceipt": ("SubmissionReceipt",),
    "Event": ("EventOut",),
    "EventPage": ("CursorPage_EventOut_",),
    "ApiKey": ("ApiKeyOut", "ApiKeyCreated"),
    "Webhook": ("WebhookOut", "WebhookWithSecret"),
    "Identity": ("CallerIdentity",),
    "Submission": ("SubmissionOut",),
    "ClaimDetail": ("ClaimDetail",),
    "ClaimDetailPage": ("Page_ClaimDetail_",),
    "Appeal": ("AppealOut",),
    "Balance": ("Balance",),
    "DeliveryAttempt": ("DeliveryAttemptOut",),
    "ReputationInterval": ("ReputationInterval",),
    "ReputationScore": ("ReputationScore",),
    "BotReputation": ("BotReputationDetail",),
    "Payout": ("Payout",),
    "PublisherDecisions": ("PublisherDecisions",),
}

_PYTHON_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                                      list: "array", dict: "object", type(None): "null"}


@cache
def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = create_app().openapi()["components"]["schemas"]
    return schemas


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return _resolved(_schemas()[schema["$ref"].rsplit("/", 1)[1]])
    return schema


def _schema_types(schema: dict[str, Any]) -> set[str]:
    schema = _resolved(schema)
    if "anyOf" in schema:
        return set().union(*(_schema_types(option) for option in schema["anyOf"]))
    if "const" in schema or "enum" in schema:
        return {"string"}
    return {schema.get("type", "object")}


def _python_types(annotation: Any) -> set[str]:
    origin = typing.get_origin(annotation)
    if origin is NotRequired:
        return _python_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_python_types(option) for option in typing.get_args(annotation)))
    if origin is Literal:
        return {_PYTHON_JSON_TYPES[type(value)] for value in typing.get_args(annotation)}
    if typing.is_typeddict(annotation):
        return {"object"}
    return {_PYTHON_JSON_TYPES[origin or annotation]}


def _sdk_fields(name: str) -> tuple[dict[str, Any], set[str]]:
    """A TypedDict's fields and its required ones (read from the hints: the module's annotations are strings)."""
    shape = getattr(sdk, name)
    hints = typing.get_type_hints(shape, include_extras=True)
    required = {field for field, hint in hints.items()
                if shape.__total__ and typing.get_origin(hint) is not NotRequired}
    return hints, required


def test_every_sdk_type_is_compared() -> None:
    declared = {name for name, value in vars(sdk).items() if typing.is_typeddict(value)}
    assert declared == set(SHAPES)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_sdk_type_matches_its_schemas(name: str) -> None:
    schemas = [_schemas()[schema] for schema in SHAPES[name]]
    properties: dict[str, Any] = {}
    for schema in schemas:
        properties.update(schema["properties"])
    required = set.intersection(*(set(schema.get("required", [])) for schema in schemas))
    fields, sdk_required = _sdk_fields(name)

    assert set(fields) == set(properties), name
    assert sdk_required == required, name
    for field, annotation in fields.items():
        assert _python_types(annotation) == _schema_types(properties[field]), f"{name}.{field}"


def test_the_sdks_artifact_types_are_the_contracts() -> None:
    assert set(typing.get_args(sdk.ArtifactType)) == {kind.value for kind in ArtifactType}
