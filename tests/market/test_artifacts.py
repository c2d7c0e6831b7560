"""Every artifact and task rule: wrong input is refused with a clear problem and nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.market.support import GOOD_CONTENT, MODULE_FIELDS, Market, claim, expect_problem, ok, status, submit

pytestmark = pytest.mark.in_process

ATTACHMENT = {"type": "image", "fileName": "shot.png", "mimeType": "image/png", "sizeBytes": 10}

# (module, body, expected code, field named in errors[])
BAD_SUBMISSIONS: list[tuple[str, dict[str, Any], str, str]] = [
    ("fun", {"resultType": "document", "content": "https://x.example/doc.pdf"}, "artifact_type_not_allowed",
     "resultType"),
    ("fun", {"resultType": "video", "content": "x"}, "validation_failed", "resultType"),
    ("fun", {"resultType": "text"}, "invalid_submission", "content"),
    ("fun", {"resultType": "text", "content": "   "}, "invalid_submission", "content"),
    ("fun", {"resultType": "external_link"}, "invalid_submission", "content"),
    ("fun", {"resultType": "external_link", "content": "/relative/path"}, "invalid_submission", "content"),
    ("fun", {"resultType": "external_link", "content": "ftp://files.example.com/x"}, "invalid_submission", "content"),
    ("fun", {"resultType": "external_link", "content": "https://exa mple.com"}, "invalid_submission", "content"),
    ("fun", {"resultType": "image"}, "invalid_submission", "content"),
    ("fun", {"resultType": "text", "content": "x" * 100_001}, "invalid_submission", "content"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [ATTACHMENT] * 11}, "validation_failed",
     "attachments"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{**ATTACHMENT, "type": "audio"}]},
     "invalid_submission", "attachments.0.type"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{**ATTACHMENT, "sizeBytes": -1}]},
     "validation_failed", "attachments.0.sizeBytes"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{k: v for k, v in ATTACHMENT.items()
                                                                     if k != "mimeType"}]},
     "validation_failed", "attachments.0.mimeType"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{**ATTACHMENT, "mimeType": "png"}]},
     "validation_failed", "attachments.0.mimeType"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{**ATTACHMENT, "fileName": "../etc/x"}]},
     "validation_failed", "attachments.0.fileName"),
    ("fun", {"resultType": "text", "content": "x", "attachments": [{**ATTACHMENT, "colour": "red"}]},
     "validation_failed", "attachments.0.colour"),
    ("fun", {"resultType": "text", "content": "x", "extra": 1}, "validation_failed", "extra"),
    ("crew", {"resultType": "github_url", "content": "https://gitlab.com/example/project/-/merge_requests/1"},
     "invalid_submission", "content"),
    ("crew", {"resultType": "web_app_url", "content": "https://app.example.com"}, "artifact_type_not_allowed",
     "resultType"),
    ("arena", {"resultType": "web_app_url", "content": "app.example.com"}, "invalid_submission", "content"),
    ("translate", {"resultType": "image", "content": "https://x.example/a.png"}, "artifact_type_not_allowed",
     "resultType"),
    ("judge", {"resultType": "text", "content": "looks good"}, "invalid_submission", "content"),
    ("judge", {"resultType": "text", "content": "[1, 2]"}, "invalid_submission", "content"),
    ("judge", {"resultType": "text", "content": json.dumps({"verdict": "", "score": 1, "rationale": "r"})},
     "invalid_submission", "content.verdict"),
    ("judge", {"resultType": "text", "content": json.dumps({"verdict": "ok", "score": "high", "rationale": "r"})},
     "invalid_submission", "content.score"),
    ("judge", {"resultType": "text", "content": json.dumps({"verdict": "ok", "score": 1})},
     "invalid_submission", "content.rationale"),
]


@pytest.mark.parametrize("module", sorted({case[0] for case in BAD_SUBMISSIONS}))
def test_bad_submissions_are_refused_and_nothing_is_stored(market: Market, module: str) -> None:
    publisher = market.publisher(funds=5)
    bot = market.operator().bot()
    fields: dict[str, Any] = {}
    if module == "judge":
        worker = market.operator().bot()
        work = market.task(publisher, "fun", bounty=0)
        target = claim(worker, work["id"])
        submit(worker, target, GOOD_CONTENT["fun"])
        fields = {"targetClaimId": target}
    task = market.task(publisher, module, bounty=5, **fields)
    claim_id = claim(bot, task["id"])
    for case_module, body, code, field in BAD_SUBMISSIONS:
        if case_module != module:
            continue
        problem = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json=body), 422, code)
        assert field in [error["field"] for error in problem["errors"]], (body, problem)
        current = status(bot, claim_id)
        assert current["status"] == "active" and current["submissionId"] is None, body
    receipt = submit(bot, claim_id, GOOD_CONTENT[module])
    assert status(bot, claim_id)["submissionId"] == receipt["submissionId"]


BAD_TASKS: list[tuple[dict[str, Any], str, str]] = [
    ({"module": "exchange", "deliverables": []}, "invalid_task", "deliverables"),
    ({"module": "fun", "deliverables": ["a"]}, "invalid_task", "deliverables"),
    ({"module": "crew"}, "invalid_task", "repositoryUrl"),
    ({"module": "crew", "repositoryUrl": "github.com/x/y"}, "invalid_task", "repositoryUrl"),
    ({"module": "translate", "sourceLanguage": "en"}, "invalid_task", "targetLanguage"),
    ({"module": "translate", "sourceLanguage": "en", "targetLanguage": "english!"}, "invalid_task",
     "targetLanguage"),
    ({"module": "translate", "sourceLanguage": "en", "targetLanguage": "EN"}, "invalid_task", "targetLanguage"),
    ({"module": "fun", "sourceLanguage": "en"}, "invalid_task", "sourceLanguage"),
    ({"module": "judge"}, "invalid_task", "targetClaimId"),
    ({"module": "judge", "targetClaimId": "clm_nope"}, "invalid_task", "targetClaimId"),
    ({"module": "fun", "maxClaims": 2}, "invalid_task", "maxClaims"),
    ({"module": "arena", "maxClaims": 3, "payoutSplit": [0.5, 0.4]}, "invalid_task", "payoutSplit"),
    ({"module": "arena", "maxClaims": 1, "payoutSplit": [0.5, 0.5]}, "invalid_task", "payoutSplit"),
    ({"module": "arena", "maxClaims": 2, "payoutSplit": [0.33333, 0.66667]}, "invalid_task", "payoutSplit"),
    ({"module": "fun", "payoutSplit": [1]}, "invalid_task", "payoutSplit"),
    ({"module": "show", "bountyAmount": 5}, "invalid_task", "bountyAmount"),
    ({"module": "fun", "bountyAmount": 1.234}, "validation_failed", "bountyAmount"),
    ({"module": "fun", "bountyAmount": -1}, "validation_failed", "bountyAmount"),
    ({"module": "fun", "deadline": "2001-01-01T00:00:00Z"}, "invalid_task", "deadline"),
    ({"module": "fun", "claimTtlSeconds": 5}, "validation_failed", "claimTtlSeconds"),
    ({"module": "judge", "rubric": {"type": "nonsense"}, "targetClaimId": "clm_x"}, "invalid_task", "rubric"),
    ({"module": "poetry"}, "validation_failed", "module"),
]


def test_bad_tasks_are_refused_and_nothing_is_stored(market: Market) -> None:
    publisher = market.publisher()
    for fields, code, field in BAD_TASKS:
        body = {"title": "t", **fields}
        problem = expect_problem(publisher.http.post("/v1/tasks", json=body), 422, code)
        assert field in [error["field"] for error in problem["errors"]], (body, problem)
    assert ok(publisher.http.get("/v1/tasks"))["total"] == 0

    draft = market.draft(publisher, "crew")
    problem = expect_problem(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"repositoryUrl": None}),
                             422, "invalid_task")
    assert problem["errors"][0]["field"] == "repositoryUrl"
    problem = expect_problem(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"title": None}),
                             422, "invalid_task")
    assert problem["errors"][0]["field"] == "title"
    problem = expect_problem(publisher.http.patch(f"/v1/tasks/{draft['id']}", json={"payoutSplit": [0, 1]}),
                             422, "validation_failed")
    assert ok(publisher.http.get(f"/v1/tasks/{draft['id']}"))["repositoryUrl"] == MODULE_FIELDS["crew"][
        "repositoryUrl"]
