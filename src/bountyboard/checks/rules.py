"""Declarative checks of a submission: pure functions of the rule and the submission body.

A rule is one of (DESIGN.md section 13)::

    {"kind": "contains" | "notContains", "value": "text", "ignoreCase": false}
    {"kind": "regex", "value": "pattern", "ignoreCase": false}      # searched in the content
    {"kind": "minLength" | "maxLength", "value": 200}                 # characters of the content
    {"kind": "jsonSchema", "schema": {...}}                           # the content parsed as JSON
    {"kind": "attachments", "min": 1, "max": 3, "types": ["image", "application/pdf", "text/*"]}

and its result is ``{"kind", "passed", "message"}``. :func:`parse_rules` checks rules when a
publisher sets them (a bad rule is a ``ValueError`` naming it); :func:`evaluate` runs them on a
submission body (``{"resultType", "content", "attachments": [...]}``, as submitted).

Regular expressions run on the ``regex`` module with a time limit (:data:`REGEX_TIMEOUT_SEC`) and a
bounded pattern, so a pattern that backtracks catastrophically fails its rule instead of holding a
worker; JSON Schemas are checked against their metaschema and resolve no remote ``$ref``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import jsonschema
import regex
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

MAX_PATTERN_CHARS = 1000
MAX_RULES = 50
REGEX_TIMEOUT_SEC = 0.25
MAX_JSON_CHARS = 1_000_000  # content longer than this is not parsed for a jsonSchema rule
_MESSAGE_VALUE_CHARS = 60


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@contextmanager
def _not_a_valid(what: str, error: type[Exception], detail: Callable[[Any], str] = str) -> Iterator[None]:
    """The library's ``error`` about a rule's value, as the ``ValueError`` pydantic reports for the rule."""
    try:
        yield
    except error as exc:
        raise ValueError(f"not a valid {what}: {detail(exc)}") from exc


class TextRule(_Rule):
    kind: Literal["contains", "notContains"]
    value: str = Field(min_length=1, max_length=10_000)
    ignoreCase: bool = False


class RegexRule(_Rule):
    kind: Literal["regex"]
    value: str = Field(min_length=1, max_length=MAX_PATTERN_CHARS)
    ignoreCase: bool = False

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        with _not_a_valid("regular expression", regex.error):
            regex.compile(value)
        return value


class LengthRule(_Rule):
    kind: Literal["minLength", "maxLength"]
    value: int = Field(ge=0, le=100_000_000)


class JsonSchemaRule(_Rule):
    kind: Literal["jsonSchema"]
    schema_: dict[str, Any] = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        validator = jsonschema.validators.validator_for(value, default=jsonschema.Draft202012Validator)
        with _not_a_valid("JSON Schema", jsonschema.SchemaError, lambda exc: exc.message):
            validator.check_schema(value)
        return value


class AttachmentsRule(_Rule):
    kind: Literal["attachments"]
    min: int = Field(default=0, ge=0, le=100)
    max: int | None = Field(default=None, ge=0, le=100)
    types: list[str] = Field(default_factory=list, max_length=50,
                             description="Artifact types (image) or MIME types (application/pdf, image/*).")

    @field_validator("max")
    @classmethod
    def _max_not_below_min(cls, value: int | None, info: Any) -> int | None:
        if value is not None and value < info.data.get("min", 0):
            raise ValueError("max may not be below min")
        return value


Rule = Annotated[TextRule | RegexRule | LengthRule | JsonSchemaRule | AttachmentsRule, Field(discriminator="kind")]
_RULES = TypeAdapter(list[Rule])


def parse_rules(rules: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """Rules as a publisher gives them, checked; a ``ValueError`` names the first bad one."""
    if len(rules) > MAX_RULES:
        raise ValueError(f"at most {MAX_RULES} rules")
    try:
        return _RULES.validate_python(list(rules))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"rules.{where}: {first['msg']}") from exc


def evaluate(rules: Sequence[Rule], submission: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each rule's result on ``submission``, in the rules' order."""
    content = submission.get("content") or ""
    attachments = [a for a in submission.get("attachments") or [] if isinstance(a, Mapping)]
    return [_result(rule, _check(rule, content, attachments)) for rule in rules]


def passed(results: Sequence[Mapping[str, Any]]) -> bool:
    return all(result["passed"] for result in results)


def _result(rule: Rule, outcome: tuple[bool, str]) -> dict[str, Any]:
    return {"kind": rule.kind, "passed": outcome[0], "message": outcome[1]}


def _shown(value: str) -> str:
    return repr(value if len(value) <= _MESSAGE_VALUE_CHARS else value[:_MESSAGE_VALUE_CHARS] + "…")


def _check(rule: Rule, content: str, attachments: list[Mapping[str, Any]]) -> tuple[bool, str]:
    if isinstance(rule, TextRule):
        return _text(rule, content)
    if isinstance(rule, RegexRule):
        return _regex(rule, content)
    if isinstance(rule, LengthRule):
        return _length(rule, content)
    if isinstance(rule, JsonSchemaRule):
        return _json_schema(rule, content)
    return _attachments(rule, attachments)


def _text(rule: TextRule, content: str) -> tuple[bool, str]:
    haystack, needle = (content.casefold(), rule.value.casefold()) if rule.ignoreCase else (content, rule.value)
    found = needle in haystack
    if rule.kind == "contains":
        return found, f"contains {_shown(rule.value)}" if found else f"does not contain {_shown(rule.value)}"
    return not found, f"contains {_shown(rule.value)}" if found else f"does not contain {_shown(rule.value)}"


def _regex(rule: RegexRule, content: str) -> tuple[bool, str]:
    flags = regex.IGNORECASE if rule.ignoreCase else 0
    try:
        match = regex.search(rule.value, content, flags=flags, timeout=REGEX_TIMEOUT_SEC)
    except TimeoutError:
        return False, f"the pattern {_shown(rule.value)} took longer than {REGEX_TIMEOUT_SEC:g} s on this content"
    if match is None:
        return False, f"no match for {_shown(rule.value)}"
    return True, f"matches {_shown(rule.value)} at character {match.start()}"


def _length(rule: LengthRule, content: str) -> tuple[bool, str]:
    length = len(content)
    if rule.kind == "minLength":
        return length >= rule.value, f"{length} characters (at least {rule.value})"
    return length <= rule.value, f"{length} characters (at most {rule.value})"


def _json_schema(rule: JsonSchemaRule, content: str) -> tuple[bool, str]:
    if len(content) > MAX_JSON_CHARS:
        return False, f"the content has more than {MAX_JSON_CHARS} characters to parse as JSON"
    try:
        document = json.loads(content)
    except ValueError as exc:
        return False, f"the content is not JSON: {exc}"
    validator_class = jsonschema.validators.validator_for(rule.schema_, default=jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator_class(rule.schema_).iter_errors(document))
    if error is None:
        return True, "the content matches the schema"
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return False, f"at {where}: {error.message[:300]}"


def _type_matches(wanted: str, attachment: Mapping[str, Any]) -> bool:
    if "/" not in wanted:
        return attachment.get("type") == wanted
    mime = str(attachment.get("mimeType") or "").lower()
    wanted = wanted.lower()
    if wanted.endswith("/*"):
        return mime.startswith(wanted[:-1])
    return mime == wanted


def _attachments(rule: AttachmentsRule, attachments: list[Mapping[str, Any]]) -> tuple[bool, str]:
    count = len(attachments)
    bounds = f"at least {rule.min}" + (f", at most {rule.max}" if rule.max is not None else "")
    if count < rule.min or (rule.max is not None and count > rule.max):
        return False, f"{count} attachments ({bounds})"
    if rule.types:
        refused = [a for a in attachments if not any(_type_matches(t, a) for t in rule.types)]
        if refused:
            first = refused[0]
            name = first.get("fileName") or first.get("fileKey") or "an attachment"
            kind = first.get("mimeType") or first.get("type")
            return False, f"{name} is {kind}, not one of {', '.join(rule.types)}"
    return True, f"{count} attachments ({bounds})"
