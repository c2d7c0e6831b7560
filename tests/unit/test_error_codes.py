"""The error-code catalogue: the documented table is generated from it, and the code raises by it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from bountyboard.error_codes import ErrorCode, errors_doc

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "bountyboard"
# Helpers whose status is fixed, and the position of their code argument.
_FIXED = {"conflict": (409, 0), "task_conflict": (409, 2), "claim_conflict": (409, 2), "invalid": (422, None)}


def _member(node: ast.expr | None) -> ErrorCode | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ErrorCode":
        return ErrorCode[node.attr]
    return None


def _raised() -> list[tuple[str, int, ErrorCode]]:
    """(place, status, code) of every call that names both a literal status and a member."""
    found = []
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            keywords = {keyword.arg: keyword.value for keyword in node.keywords}
            status: object = None
            code = None
            if name == "Problem" and len(node.args) >= 2:
                status, code = getattr(node.args[0], "value", None), _member(node.args[1])
            elif name == "send_problem" and len(node.args) >= 4:
                status, code = getattr(node.args[2], "value", None), _member(node.args[3])
            elif name in _FIXED:
                status, position = _FIXED[name]
                argument = node.args[position] if position is not None and len(node.args) > position else None
                code = _member(keywords.get("code", argument))
            if isinstance(status, int) and code is not None:
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", status, code))
    return found


def test_the_committed_docs_page_is_the_generated_one() -> None:
    committed = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert committed == errors_doc(), "regenerate: python -m bountyboard.error_codes > docs/errors.md"


def test_every_raise_answers_the_status_its_code_is_catalogued_with() -> None:
    raised = _raised()
    assert len(raised) > 60  # the scan sees the raises (it would pass vacuously otherwise)
    wrong = [f"{place}: {code} with {status}, catalogued {code.statuses}" for place, status, code in raised
             if status not in code.statuses]
    assert not wrong, wrong


def test_every_catalogued_code_is_used_by_the_code() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in SOURCE.rglob("*.py")
                     if path.name != "error_codes.py")
    unused = [code.name for code in ErrorCode if f"ErrorCode.{code.name}" not in text]
    assert not unused, f"catalogued but never answered: {unused}"


def test_a_code_is_its_plain_string_on_the_wire() -> None:
    assert ErrorCode.NOT_FOUND == "not_found" and f"{ErrorCode.NOT_FOUND}" == "not_found"
    assert json.dumps({"code": ErrorCode.NOT_FOUND}) == '{"code": "not_found"}'
    assert ErrorCode("invalid_request").statuses == (401, 422)
