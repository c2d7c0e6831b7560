"""The declarative rules of a task's checks (checks/rules.py), on hand-written cases."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bountyboard.checks.rules import REGEX_TIMEOUT_SEC, evaluate, parse_rules, passed


def run(rule: dict[str, Any], content: str | None = None, attachments: list[dict[str, Any]] | None = None
        ) -> dict[str, Any]:
    [result] = evaluate(parse_rules([rule]), {"resultType": "text", "content": content,
                                              "attachments": attachments or []})
    return result


@pytest.mark.parametrize(("rule", "content", "expected"), [
    ({"kind": "contains", "value": "42"}, "The answer is 42.", True),
    ({"kind": "contains", "value": "42"}, "The answer is forty-two.", False),
    ({"kind": "contains", "value": "ANSWER"}, "the answer", False),
    ({"kind": "contains", "value": "ANSWER", "ignoreCase": True}, "the answer", True),
    ({"kind": "contains", "value": "x"}, None, False),
    ({"kind": "notContains", "value": "TODO"}, "done", True),
    ({"kind": "notContains", "value": "TODO"}, "left a TODO", False),
    ({"kind": "notContains", "value": "todo", "ignoreCase": True}, "left a TODO", False),
    ({"kind": "regex", "value": r"^\d{3}-\d{4}$"}, "555-1234", True),
    ({"kind": "regex", "value": r"^\d{3}-\d{4}$"}, "555-12345", False),
    ({"kind": "regex", "value": r"def \w+\("}, "x = 1\ndef main(): pass", True),
    ({"kind": "regex", "value": "HELLO", "ignoreCase": True}, "hello", True),
    ({"kind": "minLength", "value": 5}, "12345", True),
    ({"kind": "minLength", "value": 5}, "1234", False),
    ({"kind": "minLength", "value": 1}, None, False),
    ({"kind": "maxLength", "value": 5}, "12345", True),
    ({"kind": "maxLength", "value": 5}, "123456", False),
    ({"kind": "maxLength", "value": 3}, "ééé", True),  # characters, not bytes
])
def test_content_rules(rule: dict[str, Any], content: str | None, expected: bool) -> None:
    result = run(rule, content)
    assert result["kind"] == rule["kind"]
    assert result["passed"] is expected
    assert result["message"]


SCHEMA = {"type": "object", "required": ["name", "score"],
          "properties": {"name": {"type": "string"}, "score": {"type": "number", "minimum": 0}}}


@pytest.mark.parametrize(("content", "expected", "message"), [
    ('{"name": "a", "score": 1}', True, "matches"),
    ('{"name": "a"}', False, "'score' is a required property"),
    ('{"name": "a", "score": -1}', False, "at score:"),
    ("not json", False, "not JSON"),
    ("[1, 2]", False, "(root)"),
])
def test_json_schema_of_the_content(content: str, expected: bool, message: str) -> None:
    result = run({"kind": "jsonSchema", "schema": SCHEMA}, content)
    assert result["passed"] is expected
    assert message in result["message"]


IMAGE = {"type": "image", "fileName": "a.png", "mimeType": "image/png", "sizeBytes": 10}
PDF = {"type": "document", "fileName": "b.pdf", "mimeType": "application/pdf", "sizeBytes": 10}


@pytest.mark.parametrize(("rule", "attachments", "expected"), [
    ({"kind": "attachments", "min": 1}, [IMAGE], True),
    ({"kind": "attachments", "min": 1}, [], False),
    ({"kind": "attachments", "max": 1}, [IMAGE, PDF], False),
    ({"kind": "attachments", "min": 0, "max": 2}, [IMAGE, PDF], True),
    ({"kind": "attachments", "types": ["image"]}, [IMAGE], True),
    ({"kind": "attachments", "types": ["image"]}, [IMAGE, PDF], False),
    ({"kind": "attachments", "types": ["image/*", "application/pdf"]}, [IMAGE, PDF], True),
    ({"kind": "attachments", "types": ["image/jpeg"]}, [IMAGE], False),
    ({"kind": "attachments", "types": ["IMAGE/PNG"]}, [IMAGE], True),
])
def test_attachment_count_and_types(rule: dict[str, Any], attachments: list[dict[str, Any]], expected: bool) -> None:
    assert run(rule, "x", attachments)["passed"] is expected


def test_a_refused_type_is_named() -> None:
    result = run({"kind": "attachments", "types": ["image"]}, "x", [IMAGE, PDF])
    assert result["message"] == "b.pdf is application/pdf, not one of image"


def test_results_keep_the_rules_order_and_all_must_pass() -> None:
    rules = parse_rules([{"kind": "minLength", "value": 2}, {"kind": "contains", "value": "z"}])
    results = evaluate(rules, {"content": "abc"})
    assert [(r["kind"], r["passed"]) for r in results] == [("minLength", True), ("contains", False)]
    assert not passed(results)
    assert passed(results[:1])
    assert passed([])


def test_a_catastrophic_pattern_fails_its_rule_within_its_time_limit() -> None:
    started = time.monotonic()
    result = run({"kind": "regex", "value": r"^(a|a)+$"}, "a" * 40 + "!")
    assert result["passed"] is False
    assert "took longer than" in result["message"]
    assert time.monotonic() - started < REGEX_TIMEOUT_SEC + 5  # the module looks at its clock now and then


@pytest.mark.parametrize(("rules", "message"), [
    ([{"kind": "regex", "value": "("}], "not a valid regular expression"),
    ([{"kind": "regex", "value": "a" * 1001}], "at most 1000"),
    ([{"kind": "jsonSchema", "schema": {"type": "nope"}}], "not a valid JSON Schema"),
    ([{"kind": "attachments", "min": 3, "max": 1}], "max may not be below min"),
    ([{"kind": "minLength", "value": -1}], "greater than or equal to 0"),
    ([{"kind": "contains"}], "rules.0.contains.value"),
    ([{"kind": "sentiment", "value": "happy"}], "does not match any of the expected tags"),
    ([{"kind": "contains", "value": "x", "extra": 1}], "Extra inputs are not permitted"),
    ([{"kind": "contains", "value": "x"}] * 51, "at most 50 rules"),
])
def test_bad_rules_are_refused_with_their_place(rules: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_rules(rules)
    assert message in str(refused.value)
