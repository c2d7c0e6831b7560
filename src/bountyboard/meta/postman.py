"""A Postman Collection v2.1 generated from the OpenAPI documents, that runs the marketplace loop.

The loop's requests, in their run order, are :data:`bountyboard.meta.postman_loop.LOOP`: each asserts
the documented status and the required properties of the documented answer, and stores the ids the
next requests use in collection variables.

Every other operation is in the last folder, "Outside the loop", because it needs something the
loop does not create (an admin key, an arena or donate task, a rejection, a judge task, a webhook
receiver; the loop reaches the signed file URLs through the addresses it was handed): the loop's
last request ends the run before it. Its requests assert that the answer's status is one the
contract documents. Every POST sends a fresh ``Idempotency-Key`` (Postman's ``{{$guid}}``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

from bountyboard.accounts.keys import KEY_PREFIX
from bountyboard.meta.openapi import HTTP_METHODS
from bountyboard.meta.postman_loop import KEY_OF_SCOPE, KEY_ROLES, LOOP, ROLES, Call, Transfer

SCHEMA_URL = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"
_PATH_PARAMETER = re.compile(r"^\{(.+)\}$")
_VARIABLE = re.compile(r"\{\{([A-Za-z][A-Za-z0-9]*)\}\}")
_SET_IN_SCRIPT = re.compile(r"collectionVariables\.set\('(\w+)'")
OUTSIDE_FOLDER = "Outside the loop"
_STOP = "pm.execution.setNextRequest(null);  // the requests outside the loop are not run"


def _singular(segment: str) -> str:
    words = segment.split("-")
    last = words[-1]
    last = last[:-3] + "y" if last.endswith("ies") else last[:-1] if last.endswith("s") else last
    words[-1] = last
    return words[0] + "".join(word.capitalize() for word in words[1:])


def path_variable(path: str, name: str) -> str:
    """The collection variable a path parameter takes: ``/v1/tasks/{id}`` -> ``taskId``; a parameter
    with a name of its own (``{fileKey}``, ``{slug}``) keeps it; ``{dlv}`` of deliveries -> ``deliveryId``."""
    segments = path.strip("/").split("/")
    index = segments.index("{" + name + "}")
    if name in ("id", "dlv"):
        return _singular(segments[index - 1]) + "Id"
    return name


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = document["components"]["schemas"][name]
    return schema


def _success(op: dict[str, Any]) -> tuple[int, str | None, dict[str, Any]]:
    """The documented success status, its media type and its schema."""
    status = next(s for s in op["responses"] if s.startswith("2"))
    content = op["responses"][status].get("content", {})
    media_type = next(iter(content), None)
    return int(status), media_type, (content[media_type].get("schema", {}) if media_type else {})


def _js(value: Any) -> str:
    return json.dumps(value)


def _loop_tests(call: Call, document: dict[str, Any], op: dict[str, Any], last: bool) -> list[str]:
    label = f"{call.method} {call.path}"
    lines = [f"pm.test({_js(label + f' answers {call.status}')}, function () {{",
             f"    pm.response.to.have.status({call.status});", "});"]
    _, media_type, schema = _success(op)
    documented = list(op["responses"][str(call.status)].get("content", {}))
    if media_type == "application/json":
        schema = _resolve(document, schema)
        kind = "array" if schema.get("type") == "array" else "object"
        required = schema.get("required", [])
        title = f"the answer is a JSON {kind}" + (" with " + ", ".join(required) if required else "")
        lines += ["const body = pm.response.json();", f"pm.test({_js(title)}, function () {{",
                  f"    pm.expect(body).to.be.an({_js(kind)});"]
        if required:
            lines.append(f"    pm.expect(body).to.include.keys({_js(required)});")
        lines.append("});")
        for expression, value in call.expects.items():
            lines += [f"pm.test({_js(expression + ' is ' + value)}, function () {{",
                      f"    pm.expect({expression}).to.eql({value});", "});"]
        for variable, expression in call.saves.items():
            lines.append(f"pm.collectionVariables.set({_js(variable)}, {expression});")
    elif media_type is not None:
        lines += [f"pm.test({_js('the answer is one of ' + ', '.join(documented))}, function () {{",
                  "    const mediaType = pm.response.headers.get('Content-Type').split(';')[0];",
                  f"    pm.expect({_js(documented)}).to.include(mediaType);",
                  "    pm.expect(pm.response.text()).to.not.be.empty;", "});"]
    if last:
        lines.append(_STOP)
    return lines


def _outside_tests(method: str, path: str, op: dict[str, Any]) -> list[str]:
    documented = sorted(int(status) for status in op["responses"] if status.isdigit())
    return [f"pm.test({_js(f'{method.upper()} {path} answers a documented status')}, function () {{",
            f"    pm.expect({_js(documented)}).to.include(pm.response.code);", "});"]


def _url(path: str, parameters: list[dict[str, Any]], query_values: dict[str, str] | None) -> dict[str, Any]:
    segments = [_PATH_PARAMETER.sub(r":\1", segment) for segment in path.strip("/").split("/")]
    query = []
    for p in parameters:
        if p.get("in") != "query":
            continue
        if query_values is not None:  # a loop request: exactly the parameters it gives
            value, enabled = query_values.get(p["name"], ""), p["name"] in query_values
        else:
            value, enabled = "{{" + p["name"] + "}}" if p.get("required") else "", bool(p.get("required"))
        query.append({"key": p["name"], "value": value, "disabled": not enabled,
                      "description": p.get("description", "")})
    raw = "{{baseUrl}}/" + "/".join(segments)
    active = [f"{q['key']}={q['value']}" for q in query if not q["disabled"]]
    if active:
        raw += "?" + "&".join(active)
    url: dict[str, Any] = {"raw": raw, "host": ["{{baseUrl}}"], "path": segments}
    if query:
        url["query"] = query
    variables = [{"key": p["name"], "value": "{{" + path_variable(path, p["name"]) + "}}",
                  "description": p.get("description", "")} for p in parameters if p.get("in") == "path"]
    if variables:
        url["variable"] = variables
    return url


def _key_for(op: dict[str, Any]) -> str:
    scopes = {scope for requirement in op.get("security") or [] for scope in requirement.get("bearerAuth", [])}
    return next((key for scope, key in KEY_OF_SCOPE.items() if scope in scopes), "botKey")


def _auth(key: str | None) -> dict[str, Any]:
    if key is None:
        return {"type": "noauth"}
    return {"type": "bearer", "bearer": [{"key": "token", "value": "{{" + key + "}}", "type": "string"}]}


def _needs_key(op: dict[str, Any]) -> bool:
    return any("bearerAuth" in requirement for requirement in op.get("security") or [])


def _request(method: str, path: str, op: dict[str, Any], call: Call | None) -> dict[str, Any]:
    parameters = op.get("parameters", [])
    headers = [{"key": "Accept", "value": "*/*" if call is None else (_success(op)[1] or "*/*")}]
    for parameter in parameters:
        if parameter.get("in") == "header":
            value = "{{$guid}}" if parameter["name"] == "Idempotency-Key" else str(parameter.get("example", ""))
            headers.append({"key": parameter["name"], "value": value,
                            "description": parameter.get("description", "")})
    request: dict[str, Any] = {
        "method": method.upper(), "header": headers,
        "url": _url(path, parameters, call.query if call is not None else None),
        "description": op.get("description", ""),
    }
    content = op.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        headers.append({"key": "Content-Type", "value": "application/json"})
        example = content["application/json"].get("example", {})
        if call is not None and call.body is not None:
            example = call.body
        request["body"] = {"mode": "raw", "raw": json.dumps(example, indent=2),
                           "options": {"raw": {"language": "json"}}}
    if not _needs_key(op):
        request["auth"] = _auth(None)
    else:
        key = call.role.key if call is not None else _key_for(op)
        if key != "botKey":  # the collection's own auth is the bot's key
            request["auth"] = _auth(key)
    return request


def _transfer_item(transfer: Transfer, last: bool) -> dict[str, Any]:
    request: dict[str, Any] = {"method": transfer.method, "header": [], "auth": _auth(None),
                               "url": "{{" + transfer.url_variable + "}}",
                               "description": f"The URL the service answered as `{transfer.url_variable}`."}
    if transfer.content_type_variable:
        request["header"].append({"key": "Content-Type", "value": "{{" + transfer.content_type_variable + "}}"})
    if transfer.body is not None:
        request["body"] = {"mode": "raw", "raw": transfer.body}
    tests = [f"pm.test({_js(transfer.name + ' answers 200')}, function () {{",
             "    pm.response.to.have.status(200);", *(f"    {check}" for check in transfer.checks), "});"]
    if last:
        tests.append(_STOP)
    return {"name": transfer.name, "request": request, "event": [_event("test", tests)], "response": []}


def _event(listen: str, lines: list[str] | tuple[str, ...]) -> dict[str, Any]:
    return {"listen": listen, "script": {"type": "text/javascript", "exec": list(lines)}}


def _operations(documents: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str, str, dict[str, Any]]]:
    for document in documents:
        for path, item in document.get("paths", {}).items():
            for method in HTTP_METHODS:
                if method in item:
                    yield document, method, path, item[method]


def loop_scopes(documents: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The scopes each key variable needs for the loop's requests, from the documents."""
    ops = {(method.upper(), path): op for _, method, path, op in _operations(documents)}
    needed: dict[str, set[str]] = {}
    for call in LOOP:
        if isinstance(call, Call) and call.role.key is not None:
            scopes = needed.setdefault(call.role.key, set())
            for requirement in ops[(call.method, call.path)].get("security") or []:
                scopes.update(requirement.get("bearerAuth", []))
    return {key: sorted(scopes) for key, scopes in needed.items()}


def _variables(collection: dict[str, Any], base_url: str, scopes: dict[str, list[str]]) -> list[dict[str, Any]]:
    described: dict[str, tuple[str, str]] = {
        "baseUrl": (base_url, "The service's address."),
        **{key: (f"{KEY_PREFIX}...",
                 f"{role}; the loop needs its scopes: {', '.join(f'`{s}`' for s in scopes.get(key, []))}. "
                 "Keep it out of shared workspaces.") for key, role in KEY_ROLES.items()},
        "adminKey": ("", "An admin's key, only for the admin requests outside the loop."),
    }
    saved = {variable for call in LOOP if isinstance(call, Call)
             for variable in [*call.saves, *_SET_IN_SCRIPT.findall(" ".join(call.prerequest))]}
    referenced = sorted(set(_VARIABLE.findall(json.dumps(collection))) - set(described))
    return ([{"key": key, "value": value, "type": "string", "description": text}
             for key, (value, text) in described.items()]
            + [{"key": key, "value": "", "type": "string",
                "description": "Set by the loop." if key in saved else "Set it for the requests outside the loop."}
               for key in referenced])


def build_collection(documents: list[dict[str, Any]], base_url: str) -> dict[str, Any]:
    ops = {(method.upper(), path): (document, op) for document, method, path, op in _operations(documents)}
    folders: dict[str, list[dict[str, Any]]] = {role.folder: [] for role in ROLES}
    for index, call in enumerate(LOOP):
        last = index == len(LOOP) - 1
        if isinstance(call, Transfer):
            folders[call.role.folder].append(_transfer_item(call, last))
            continue
        document, op = ops[(call.method, call.path)]
        events = [_event("test", _loop_tests(call, document, op, last))]
        if call.prerequest:
            events.insert(0, _event("prerequest", call.prerequest))
        folders[call.role.folder].append({
            "name": op.get("summary") or f"{call.method} {call.path}",
            "request": _request(call.method, call.path, op, call), "event": events, "response": [],
        })
    in_loop = {(call.method, call.path) for call in LOOP if isinstance(call, Call)}
    outside: dict[str, list[dict[str, Any]]] = {}
    for _, method, path, op in _operations(documents):
        if (method.upper(), path) in in_loop:
            continue
        outside.setdefault((op.get("tags") or ["default"])[0], []).append({
            "name": op.get("summary") or f"{method.upper()} {path}",
            "request": _request(method, path, op, None),
            "event": [_event("test", _outside_tests(method, path, op))], "response": [],
        })
    roles = {role.folder: role for role in ROLES}
    main = documents[0]["info"]
    collection: dict[str, Any] = {
        "info": {
            "_postman_id": str(uuid.uuid5(uuid.NAMESPACE_URL, base_url + "/v1/meta/postman.json")),
            "name": main["title"],
            "description": main.get("description", "") + "\n\nRun the collection to work the loop once: set "
            "`publisherKey`, `botKey` and `reviewerKey` (each variable's description lists the scopes it needs). "
            f"The requests in \"{OUTSIDE_FOLDER}\" need data the loop does not create; the run stops before them.",
            "version": main["version"],
            "schema": SCHEMA_URL,
        },
        "item": [{"name": name, "description": roles[name].description, "item": items}
                 for name, items in folders.items()]
        + [{"name": OUTSIDE_FOLDER, "description": "Operations that need an admin key or data the loop does not "
            "create (an arena or donate task, a rejection, a judge task, a webhook receiver), and the signed "
            "file URLs, which the loop uses through the addresses the service answers.",
            "item": [{"name": tag, "item": items} for tag, items in outside.items()]}],
        "auth": _auth("botKey"),
    }
    collection["variable"] = _variables(collection, base_url, loop_scopes(documents))
    return collection
