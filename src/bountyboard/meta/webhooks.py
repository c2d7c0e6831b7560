"""The outbound events as the OpenAPI document's top-level ``webhooks`` object.

The payload shapes are the models of ``events.kinds``, the ones every emitter hands to ``emit()``; the
envelope and headers are those of Standard Webhooks (DESIGN.md section 7).
"""

from __future__ import annotations

from typing import Any

from bountyboard.errors import PROBLEM_MEDIA_TYPE
from bountyboard.events.kinds import MODELS, OPERATOR_KINDS, PUBLIC_KINDS, EventKind
from bountyboard.meta.schema_examples import example_for_schema

# What each public kind means (SPEC.md section 6), in lifecycle order; the payload is its model's.
_MEANINGS: dict[EventKind, str] = {
    EventKind.TASK_CLAIMED: "A task was claimed and a claim record exists.",
    EventKind.CLAIM_SUBMITTED: "A claim submission was recorded.",
    EventKind.CLAIM_REVIEWED: "A publisher or reviewer accepted or rejected the submitted work.",
    EventKind.APPEAL_RESOLVED: "A downstream appeal or dispute flow completed.",
    EventKind.CLAIM_CHECKED: "A submission's checks ended; a binding failure made the claim active again.",
}

_SIGNATURE_HEADERS = [
    ("webhook-id", "The event id (evt_...); stable across retries, use it to deduplicate.",
     "evt_01jd2k3m4n5p6q7r8s9t0v1w2x"),
    ("webhook-timestamp", "Unix seconds when this attempt was signed; reject stale ones.", "1767268800"),
    ("webhook-signature", "Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>` signatures "
     "(two during a secret rotation).", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="),
]


def _envelope_schema(event_type: str, data_ref: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", "timestamp", "data"],
        "properties": {
            "type": {"type": "string", "const": event_type},
            "timestamp": {"type": "string", "format": "date-time"},
            "data": {"$ref": data_ref},
        },
    }


def add_webhooks(document: dict[str, Any]) -> None:
    """Put the payload schemas in components and describe each delivery under ``webhooks``."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    webhooks: dict[str, Any] = {}
    for kind in PUBLIC_KINDS:
        [model], meaning, event_type = MODELS[kind], _MEANINGS[kind], kind.value
        schemas[model.__name__] = model.model_json_schema(ref_template="#/components/schemas/{model}")
        data_ref = f"#/components/schemas/{model.__name__}"
        data_example = example_for_schema(model.model_json_schema(), {})
        example = {"type": event_type, "timestamp": "2026-01-01T12:00:00Z", "data": data_example}
        subscribable = "Operators (user keys) may subscribe to it." if event_type in OPERATOR_KINDS \
            else "Only bot-key subscriptions receive it; it is always visible in GET /v1/agent/events."
        webhooks[event_type] = {
            "post": {
                "summary": event_type,
                "description": f"{meaning} {subscribable} Delivered at least once with Standard Webhooks "
                               "signatures; answer 2xx within 15 s. 410 disables the endpoint.",
                "operationId": "webhook_" + event_type.replace(".", "_"),
                "parameters": [
                    {"name": name, "in": "header", "required": True, "description": description,
                     "schema": {"type": "string"}, "example": example_value}
                    for name, description, example_value in _SIGNATURE_HEADERS
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _envelope_schema(event_type, data_ref),
                                                      "example": example}},
                },
                "responses": {
                    "200": {"description": "Received. Any 2xx counts as delivered."},
                    "410": {"description": "Gone: the subscription is disabled and no further attempts are made."},
                    "default": {"description": "Any other answer is a failure and is retried later.",
                                "content": {PROBLEM_MEDIA_TYPE: {"schema": {}}}},
                },
            }
        }
    document["webhooks"] = webhooks

