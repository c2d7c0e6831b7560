"""The verifiers, with the options of the hub's own registry records."""

from __future__ import annotations

from typing import Any

import pytest

from bountyboard.runner.verifiers import reference_answer, verify
from tests.runner.conftest import hub_record

pytestmark = pytest.mark.in_process


def _spec(slug: str) -> dict[str, Any]:
    return dict(hub_record(slug)["harbor"]["adapter"]["verifier"])


@pytest.mark.parametrize(("answer", "reward"), [
    ("18", 1.0), ("The answer is 1,018? No: 18", 1.0), ("18.0000001", 1.0), ("19", 0.0), ("", 0.0),
])
def test_numeric_reads_the_number_after_hashes_in_the_target(answer: str, reward: float) -> None:
    expected = {"target": "9 + 9 = 18\n#### 18", "verifier": _spec("gsm8k")}
    assert verify(expected, answer) == reward
    assert reference_answer(expected) == "18"


def test_numeric_accepts_thousands_separators_and_exact_tolerance() -> None:
    expected = {"target": "#### 1,234", "verifier": _spec("gsm8k")}
    assert verify(expected, "1234") == 1.0
    aime = {"target": "204", "verifier": _spec("aime-2024")}
    assert verify(aime, "204") == 1.0 and verify(aime, "204.5") == 0.0


def test_exact_with_full_normalisation_accepts_any_alias() -> None:
    expected = {"target": ["the beatles", "beatles"], "verifier": _spec("triviaqa")}
    assert verify(expected, "The Beatles!") == 1.0
    assert verify(expected, "  beatles ") == 1.0
    assert verify(expected, "Rolling Stones") == 0.0
    assert reference_answer(expected) == "the beatles"


def test_exact_takes_the_boxed_answer_when_there_is_one() -> None:
    expected = {"target": "\\frac{1}{2}", "verifier": _spec("math-500")}
    assert verify(expected, "So we get \\boxed{\\frac{1}{2}}") == 1.0
    assert verify(expected, "\\frac{1}{2}") == 1.0
    assert verify(expected, "\\boxed{\\frac{1}{3}}") == 0.0


def test_exact_on_booleans_is_case_insensitive_only_when_asked() -> None:
    assert verify({"target": True, "verifier": _spec("boolq")}, "true") == 1.0
    assert verify({"target": "Yes", "verifier": {"kind": "exact"}}, "yes") == 0.0


def test_regex_puts_the_escaped_target_into_the_pattern() -> None:
    expected = {"target": "(B)", "verifier": _spec("bbh-date-understanding")}
    assert verify(expected, "(B)") == 1.0
    assert verify(expected, "So the answer is (B).") == 1.0
    assert verify(expected, "(C)") == 0.0
    assert verify(expected, "B") == 0.0


@pytest.mark.parametrize(("slug", "target", "labels"), [
    ("mmlu", 2, None), ("mmlu-pro", "C", None), ("arc-challenge", "3", ["1", "2", "3", "4"]),
    ("arc-challenge", "C", ["A", "B", "C", "D"]),
])
def test_choice_reads_the_target_as_its_format_says(slug: str, target: Any, labels: list[str] | None) -> None:
    expected = {"target": target, "choices": ["red", "green", "blue", "white"], "labels": labels,
                "verifier": _spec(slug)}
    key = labels[2] if labels else "C"
    assert reference_answer(expected) == key
    for answer in (key, f"({key})", f"{key}.", "blue", f"The answer is {key}"):
        assert verify(expected, answer) == 1.0, answer
    for answer in ("red", labels[0] if labels else "A", "", "a lot of words"):
        assert verify(expected, answer) == 0.0, answer


def test_unknown_verifier_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown verifier kind"):
        verify({"target": "x", "verifier": {"kind": "fuzzy"}}, "x")


def test_field_paths_reach_into_nested_values() -> None:
    from bountyboard.runner.adapters import PullError, field_value

    row = {"answer": {"normalized_aliases": ["beatles", "the beatles"]},
           "choices": {"text": ["x", "y"], "label": ["A", "B"]},
           "passages": [{"text": "one"}, {"text": "two"}]}
    assert field_value(row, "answer.normalized_aliases") == ["beatles", "the beatles"]
    assert field_value(row, "choices.label") == ["A", "B"]
    assert field_value(row, "passages.text") == ["one", "two"]
    with pytest.raises(PullError, match="no field 'question'"):
        field_value(row, "question")
    with pytest.raises(PullError, match="not inside a record"):
        field_value(row, "choices.text.first")
