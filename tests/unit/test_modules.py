"""Module rules: what each module's tasks must carry, and what their submissions may be."""

from __future__ import annotations

import json
from itertools import product
from typing import Any

import pytest

from bountyboard.contract.artifacts import ArtifactType
from bountyboard.market.modules import Module, is_claimable, submission_errors, task_rule_errors

M = Module
# A task of each module that breaks no rule (stored column names, as the service passes them).
VALID: dict[Module, dict[str, Any]] = {
    M.FUN: {"max_claims": 1, "bounty_cents": 1000},
    M.ARENA: {"max_claims": 3, "payout_split": [7000, 3000], "bounty_cents": 1000},
    M.EXCHANGE: {"deliverables": ["a translation", "a glossary"]},
    M.CREW: {"repository_url": "https://github.com/example/project"},
    M.DONATE: {},
    M.TRANSLATE: {"source_language": "en", "target_language": "pt-BR"},
    M.JUDGE: {"target_claim_id": "clm_1", "rubric": {"type": "object", "required": ["score"]}},
    M.SHOW: {"bounty_cents": 0},
}
# SPEC.md section 1: the artifact types each module accepts.
ALLOWED = {
    M.FUN: {"text", "image", "external_link"},
    M.ARENA: {"text", "image", "document", "audio", "github_url", "web_app_url", "external_link"},
    M.EXCHANGE: {"text", "image", "document", "audio", "github_url", "web_app_url", "external_link"},
    M.CREW: {"github_url", "text"},
    M.DONATE: {"text", "image", "document", "github_url", "external_link"},
    M.TRANSLATE: {"document", "text"},
    M.JUDGE: {"text"},
    M.SHOW: {"text", "image", "github_url", "web_app_url", "external_link"},
}
JUDGMENT = json.dumps({"verdict": "pass", "score": 8, "rationale": "Complete."})


def fields_of(errors: list[dict[str, str]]) -> list[str]:
    return [error["field"] for error in errors]


@pytest.mark.parametrize("module", list(Module))
def test_a_valid_task_of_each_module(module: Module) -> None:
    assert task_rule_errors(module, VALID[module]) == []


@pytest.mark.parametrize(("module", "change", "field", "message"), [
    (M.FUN, {"max_claims": 2}, "maxClaims", "only arena tasks take more than one claim"),
    (M.FUN, {"payout_split": [10_000]}, "payoutSplit", "only arena tasks have a payout split"),
    (M.ARENA, {"max_claims": 1}, "payoutSplit", "has more places than maxClaims"),
    (M.ARENA, {"payout_split": [7000, 2000]}, "payoutSplit", "shares must be above zero and add up to exactly 1"),
    (M.ARENA, {"payout_split": [10_000, 0]}, "payoutSplit", "shares must be above zero and add up to exactly 1"),
    (M.EXCHANGE, {"deliverables": []}, "deliverables", "exchange tasks list at least one deliverable"),
    (M.FUN, {"deliverables": ["x"]}, "deliverables", "only exchange tasks have deliverables"),
    (M.CREW, {"repository_url": None}, "repositoryUrl", "crew tasks name their repository"),
    (M.CREW, {"repository_url": "github.com/x"}, "repositoryUrl", "must be an absolute http(s) URL"),
    (M.FUN, {"repository_url": "ftp://x.org"}, "repositoryUrl", "must be an absolute http(s) URL"),
    (M.TRANSLATE, {"source_language": None}, "sourceLanguage",
     "translate tasks need both languages (BCP 47 tags such as en or pt-BR)"),
    (M.TRANSLATE, {"target_language": "portuguese!"}, "targetLanguage", "is not a BCP 47 language tag"),
    (M.TRANSLATE, {"target_language": "EN"}, "targetLanguage", "must differ from sourceLanguage"),
    (M.FUN, {"source_language": "en"}, "sourceLanguage", "only translate tasks have languages"),
    (M.FUN, {"target_language": "en"}, "targetLanguage", "only translate tasks have languages"),
    (M.JUDGE, {"target_claim_id": None}, "targetClaimId", "judge tasks name the claim they evaluate"),
    (M.FUN, {"target_claim_id": "clm_1"}, "targetClaimId", "only judge tasks target a claim"),
    (M.FUN, {"rubric": {}}, "rubric", "only judge tasks have a rubric"),
    (M.SHOW, {"bounty_cents": 100}, "bountyAmount", "show tasks are not claimable, so they carry no bounty"),
])
def test_task_rules(module: Module, change: dict[str, Any], field: str, message: str) -> None:
    assert task_rule_errors(module, VALID[module] | change) == [{"field": field, "message": message}]


def test_a_judge_rubric_must_be_a_json_schema() -> None:
    errors = task_rule_errors(M.JUDGE, VALID[M.JUDGE] | {"rubric": {"type": "no-such-type"}})
    assert fields_of(errors) == ["rubric"]
    assert errors[0]["message"].startswith("is not a valid JSON Schema")


def test_only_show_tasks_cannot_be_claimed() -> None:
    assert [module for module in Module if not is_claimable(module)] == [M.SHOW]


@pytest.mark.parametrize(("module", "kind"), list(product(Module, ArtifactType)))
def test_artifact_types(module: Module, kind: ArtifactType) -> None:
    errors = submission_errors(module, kind.value, "https://files.example.com/result", [], None)
    if kind in ALLOWED[module]:
        assert "resultType" not in fields_of(errors)
    else:
        assert fields_of(errors) == ["resultType"]


@pytest.mark.parametrize(("module", "result_type", "content", "attachments"), [
    (M.FUN, "text", "Ten names for a cat.", []),
    (M.FUN, "image", None, ["image"]),  # a file type carried by an attachment
    (M.FUN, "image", "https://files.example.com/cat.png", []),
    (M.CREW, "github_url", "https://github.com/example/project/pull/7", []),
    (M.ARENA, "web_app_url", "https://demo.example.com", []),
    (M.JUDGE, "text", JUDGMENT, []),
])
def test_good_submissions(module: Module, result_type: str, content: str | None, attachments: list[str]) -> None:
    assert submission_errors(module, result_type, content, attachments, None) == []


@pytest.mark.parametrize(("module", "result_type", "content", "attachments", "fields"), [
    (M.JUDGE, "image", "https://x.org/a.png", [], ["resultType"]),
    (M.FUN, "text", "hi", ["audio"], ["attachments.0.type"]),
    (M.FUN, "text", "x" * 100_001, [], ["content"]),
    (M.ARENA, "github_url", None, [], ["content"]),
    (M.ARENA, "external_link", "not a url", [], ["content"]),
    (M.CREW, "github_url", "https://gitlab.com/example/project", [], ["content"]),
    (M.FUN, "text", "   ", [], ["content"]),
    (M.ARENA, "document", None, [], ["content"]),
])
def test_bad_submissions(module: Module, result_type: str, content: str | None, attachments: list[str],
                         fields: list[str]) -> None:
    assert fields_of(submission_errors(module, result_type, content, attachments, None)) == fields


@pytest.mark.parametrize(("content", "fields"), [
    ("not json", ["content"]),
    ("[1, 2]", ["content"]),
    (json.dumps({"verdict": "", "score": 8, "rationale": "r"}), ["content.verdict"]),
    (json.dumps({"verdict": "pass", "score": True, "rationale": "r"}), ["content.score"]),
    (json.dumps({"verdict": "pass", "score": "8", "rationale": " "}), ["content.score", "content.rationale"]),
])
def test_judgments_are_verdict_score_and_rationale(content: str, fields: list[str]) -> None:
    assert fields_of(submission_errors(M.JUDGE, "text", content, [], None)) == fields


def test_a_judgment_follows_the_task_rubric() -> None:
    rubric = {"type": "object", "properties": {"score": {"maximum": 5}}}
    assert fields_of(submission_errors(M.JUDGE, "text", JUDGMENT, [], rubric)) == ["content.score"]
    broken = {"$ref": "#/definitions/missing"}
    errors = submission_errors(M.JUDGE, "text", JUDGMENT, [], broken)
    assert errors[0]["message"].startswith("the task's rubric cannot be applied")
