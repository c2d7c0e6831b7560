"""The OpenAPI documents, generated from the application's routes (never written by hand).

Two documents come out of one app: the agent interface (OpenAPI 3.1.0, version 1.0.0: every
route that is not tagged ``benchhub``) and the benchmark hub's (version 2.0.0: the routes tagged
``benchhub``). FastAPI gives the paths, bodies and per-operation security requirements (the
scopes come from ``require(Scope.X)``); this module adds what FastAPI does not know about:
problem+json error answers, the ``Idempotency-Key`` header on POST, optional authentication,
examples, stable operation ids and the outbound events under ``webhooks``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterator
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from bountyboard.accounts.auth import BEARER_SCHEME, optionally_authenticated
from bountyboard.accounts.keys import KEY_PREFIX
from bountyboard.config import get_settings
from bountyboard.errors import PROBLEM_MEDIA_TYPE, PROBLEM_TYPE_BASE, ErrorCode, ProblemDetail
from bountyboard.idempotency import MAX_KEY_LENGTH
from bountyboard.meta.schema_examples import attach_example
from bountyboard.meta.webhooks import add_webhooks
from bountyboard.querystrings import QueryModel
from bountyboard.ratelimit import KEY_LIMITED_PREFIXES

AGENT_API_TITLE = "bountyboard agent API"
AGENT_API_VERSION = "1.0.0"
BENCHHUB_API_TITLE = "bountyboard benchmark hub API"
BENCHHUB_API_VERSION = "2.0.0"
BENCHHUB_TAG = "benchhub"
OPENAPI_VERSION = "3.1.0"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

TAG_DESCRIPTIONS = {
    "agent": "The agent loop: discover tasks, claim one, submit the artifact, track review.",
    "identity": "Who is calling.",
    "bots": "Bot identities of an operator.",
    "profile": "The operator's profile and API keys.",
    "webhooks": "Outbound webhook subscriptions and their deliveries.",
    "events": "The events feed, the polling fallback of webhooks.",
    "meta": "Machine-readable companions: this document, the manifest, skill.md, Postman, examples.",
    "admin": "Administration (admin role and scope only).",
    BENCHHUB_TAG: "Benchmark registry, run uploads and reproduced results.",
}

_PROBLEM_EXAMPLES: dict[int, tuple[ErrorCode, str]] = {
    400: (ErrorCode.INVALID_IDEMPOTENCY_KEY, f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable characters."),
    401: (ErrorCode.UNAUTHENTICATED, "This operation needs an API key: send Authorization: Bearer svc-..."),
    403: (ErrorCode.INSUFFICIENT_SCOPE,
          "This operation needs the scope tasks:claim, which the API key does not carry."),
    404: (ErrorCode.NOT_FOUND, "No task with id 'task_01jd2k3m4n5p6q7r8s9t0v1w2x' exists for this caller."),
    409: (ErrorCode.IDEMPOTENCY_KEY_IN_USE,
          "A request with this Idempotency-Key is still being processed. Retry later."),
    413: (ErrorCode.PAYLOAD_TOO_LARGE, "The request body is larger than this route accepts (1048576 bytes)."),
    422: (ErrorCode.VALIDATION_FAILED, "The request is not valid: resultType: Input should be 'text'"),
    429: (ErrorCode.RATE_LIMITED, "Too many requests. Retry after the number of seconds in Retry-After."),
    503: (ErrorCode.RATE_LIMIT_UNAVAILABLE,
          "Rate limit runs-ip cannot be counted now: its counters do not answer. Retry after 5 s."),
    500: (ErrorCode.INTERNAL_ERROR, "The server failed to answer this request. Quote the requestId when reporting it."),
}
_PROBLEM_DESCRIPTIONS = {
    400: "Bad request (for example a malformed Idempotency-Key)",
    401: "Missing, malformed, expired or revoked API key",
    403: "The key lacks a required scope, or the caller may not do this",
    404: "Not found",
    409: "Conflict with the current state, or the same Idempotency-Key is still in flight",
    413: "The request body is larger than this route accepts",
    422: "Invalid input, or an Idempotency-Key reused with another body",
    429: "Rate limit exceeded; retry after Retry-After seconds",
    503: "A rate limit cannot be counted now (its counters do not answer); retry after Retry-After seconds",
}
_REQUEST_ID_HEADER = {
    "X-Request-Id": {"description": "Identifier of this request; quote it when reporting a problem.",
                     "required": True, "schema": {"type": "string"}},
}
IDEMPOTENCY_PARAMETER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Makes a retry safe: the first answer is kept for 24 hours and replayed (with "
                   "`Idempotent-Replayed: true`) for a retry with the same key and body. Send a new "
                   "uuid4 per logical request and the same one on every retry of it.",
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH, "pattern": "^[!-~]+$"},
    "example": "0b5f9a4e-6f1d-4c1e-9a58-3c1f2d0e7a11",
}


def documented_routes(app: FastAPI) -> list[RouteContext]:
    """Every operation route in the document, including those of included routers."""
    return [context for context in iter_route_contexts(app.routes)
            if isinstance(context.original_route, APIRoute) and context.include_in_schema]


def _is_benchhub(route: RouteContext) -> bool:
    return BENCHHUB_TAG in (route.tags or [])


def _dependency_calls(dependant: Dependant) -> Iterator[Callable[..., Any] | None]:
    for dependency in dependant.dependencies:
        yield dependency.call
        yield from _dependency_calls(dependency)


def _problem(status: int, scopes: list[str]) -> dict[str, Any]:
    code, detail = _PROBLEM_EXAMPLES.get(status, (ErrorCode.HTTP_ERROR, "The request failed."))
    example = ProblemDetail(
        type=PROBLEM_TYPE_BASE + code, title=HTTPStatus(status).phrase, status=status, detail=detail,
        instance="/v1/agent/tasks/task_01jd2k3m4n5p6q7r8s9t0v1w2x/claim", code=code,
        requestId="req_01jd2k3m4n5p6q7r8s9t0v1w2x",
        requiredScopes=scopes[:1] if status == 403 and scopes else None,
    ).model_dump(exclude_none=True)
    return {
        "description": _PROBLEM_DESCRIPTIONS.get(status, "Error"),
        "headers": copy.deepcopy(_REQUEST_ID_HEADER),
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetail"},
                                         "example": example}},
    }


def _operation_ids(routes: list[RouteContext]) -> dict[tuple[str, str], str]:
    """Route function names make readable operation ids; a name used twice keeps FastAPI's id."""
    counts = Counter(route.name for route in routes for _ in route.methods or ())
    return {
        (str(route.path_format), method.lower()): str(route.name)
        for route in routes for method in route.methods or () if counts[route.name] == 1
    }


def _finish_operation(op: dict[str, Any], method: str, route: RouteContext | None, op_id: str | None,
                      components: dict[str, Any]) -> None:
    if op_id:
        op["operationId"] = op_id
    security = op.get("security") or []
    optional = route is not None and optionally_authenticated in set(_dependency_calls(route.dependant))
    if optional and {} not in security:
        security = [{}, *security]
        op["security"] = security
    scopes = sorted({scope for requirement in security for scope in requirement.get(BEARER_SCHEME, [])})
    secured = any(BEARER_SCHEME in requirement for requirement in security)
    if secured:
        op["x-required-scopes"] = scopes
        needs = f"scopes {', '.join(f'`{s}`' for s in scopes)}" if scopes else "any valid key"
        who = "Optional bearer key" if optional else "Bearer key"
        line = f"{who} ({KEY_PREFIX}...) with {needs}."
    else:
        line = "No authentication."
    op["description"] = f"{op['description']}\n\n{line}" if op.get("description") else line

    parameters = op.setdefault("parameters", [])
    if method == "post" and not any(p.get("name") == "Idempotency-Key" for p in parameters):
        parameters.append(copy.deepcopy(IDEMPOTENCY_PARAMETER))
    if not parameters:
        del op["parameters"]

    responses: dict[str, Any] = op.setdefault("responses", {})
    statuses: set[int] = set()
    if secured:
        statuses |= {401, 403}
    if any(p.get("in") == "path" for p in parameters):
        statuses |= {404, 422}
    if any(p.get("in") == "query" for p in parameters) or "requestBody" in op:
        statuses.add(422)
    if method == "post":
        statuses |= {400, 409, 422}
    if "requestBody" in op:
        statuses.add(413)  # bountyboard.bodylimit
    if secured and route is not None and str(route.path_format).startswith(KEY_LIMITED_PREFIXES):
        statuses.add(429)  # every key's general limit (bountyboard.ratelimit)
    for number in sorted(statuses):
        responses.setdefault(str(number), _problem(number, scopes))
    for status, response in list(responses.items()):
        content = response.get("content", {})
        validation = content.get("application/json", {}).get("schema", {}).get("$ref", "")
        if validation.endswith("/HTTPValidationError"):
            responses[status] = _problem(int(status), scopes)
        elif status.startswith(("4", "5")):
            response.setdefault("headers", copy.deepcopy(_REQUEST_ID_HEADER))
            for media in content.values():
                media.setdefault("example", _problem(int(status), scopes)["content"][PROBLEM_MEDIA_TYPE]["example"])
        else:
            response.setdefault("headers", copy.deepcopy(_REQUEST_ID_HEADER))
            for media in content.values():
                attach_example(media, components)
    responses["default"] = {**_problem(500, scopes), "description": "Any other error, as problem+json"}

    body = op.get("requestBody", {}).get("content", {})
    for media in body.values():
        attach_example(media, components)


def _build(app: FastAPI, routes: list[RouteContext], title: str, version: str, description: str) -> dict[str, Any]:
    document = get_openapi(
        title=title, version=version, openapi_version=OPENAPI_VERSION, description=description, routes=routes,
        servers=[{"url": get_settings().effective_base_url}],
    )
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    problem = ProblemDetail.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in problem.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    schemas["ProblemDetail"] = problem
    # The enumerations that query models' parameters refer to; kept below where this document does.
    query_definitions = {name: definition for model in QueryModel.models
                         for name, definition in model.definitions().items() if name not in schemas}
    schemas.update(query_definitions)
    components.setdefault("securitySchemes", {})
    by_path = {(route.path_format, method.lower()): route for route in routes for method in route.methods or ()}
    op_ids = _operation_ids(routes)
    for path, item in document.get("paths", {}).items():
        for method in HTTP_METHODS:
            if method in item:
                _finish_operation(item[method], method, by_path.get((path, method)), op_ids.get((path, method)),
                                  schemas)
    used_tags = sorted({tag for item in document.get("paths", {}).values() for method in HTTP_METHODS
                        for tag in item.get(method, {}).get("tags", [])})
    document["tags"] = [{"name": tag, "description": TAG_DESCRIPTIONS.get(tag, tag)} for tag in used_tags]
    _drop_unused_schemas(document, ("HTTPValidationError", "ValidationError", *query_definitions))
    return document


def _drop_unused_schemas(document: dict[str, Any], names: tuple[str, ...]) -> None:
    """Remove the named schemas that nothing refers to (FastAPI's validation-error schemas, once every
    reference to them was replaced; query models' definitions a document has no use for)."""
    schemas = document["components"]["schemas"]
    for name in names:
        if f'"#/components/schemas/{name}"' not in json.dumps(document):
            schemas.pop(name, None)


def _cache(app: FastAPI) -> dict[str, dict[str, Any]]:
    if not hasattr(app.state, "meta_documents"):
        app.state.meta_documents = {}
    cache: dict[str, dict[str, Any]] = app.state.meta_documents
    return cache


def agent_document(app: FastAPI) -> dict[str, Any]:
    cache = _cache(app)
    if "agent" not in cache:
        base = get_settings().effective_base_url
        document = _build(
            app, [route for route in documented_routes(app) if not _is_benchhub(route)],
            AGENT_API_TITLE, AGENT_API_VERSION,
            "Discover tasks, claim one, submit its artifact and follow the asynchronous review. "
            f"Every operation takes `Authorization: Bearer {KEY_PREFIX}...`. Errors are RFC 9457 "
            "problem+json. Start with the agent manifest "
            f"({base}/v1/meta/agent-manifest) and the execution policy ({base}/v1/meta/skill.md).",
        )
        add_webhooks(document)
        cache["agent"] = document
    return cache["agent"]


def benchhub_document(app: FastAPI) -> dict[str, Any]:
    cache = _cache(app)
    if "benchhub" not in cache:
        cache["benchhub"] = _build(
            app, [route for route in documented_routes(app) if _is_benchhub(route)],
            BENCHHUB_API_TITLE, BENCHHUB_API_VERSION,
            "Upload benchmark runs with their verifier scores and find which claimed results have been "
            "reproduced. Reads are public; uploads take an optional bearer key with `runs:write`.",
        )
    return cache["benchhub"]


def install(app: FastAPI) -> None:
    """Serve the generated agent document wherever FastAPI serves its own (and to /docs)."""

    def openapi() -> dict[str, Any]:
        return agent_document(app)

    app.openapi = openapi  # type: ignore[method-assign]
