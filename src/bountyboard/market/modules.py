"""The eight modules, their artifact types (SPEC.md section 1) and the rules each module adds."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import jsonschema

from bountyboard.contract.artifacts import ArtifactType


class Module(StrEnum):
    FUN = "fun"
    ARENA = "arena"
    EXCHANGE = "exchange"
    CREW = "crew"
    DONATE = "donate"
    TRANSLATE = "translate"
    JUDGE = "judge"
    SHOW = "show"


A = ArtifactType
ALLOWED_ARTIFACT_TYPES: dict[Module, tuple[ArtifactType, ...]] = {
    Module.FUN: (A.TEXT, A.IMAGE, A.EXTERNAL_LINK),
    Module.ARENA: (A.TEXT, A.IMAGE, A.DOCUMENT, A.AUDIO, A.GITHUB_URL, A.WEB_APP_URL, A.EXTERNAL_LINK),
    Module.EXCHANGE: (A.TEXT, A.IMAGE, A.DOCUMENT, A.AUDIO, A.GITHUB_URL, A.WEB_APP_URL, A.EXTERNAL_LINK),
    Module.CREW: (A.GITHUB_URL, A.TEXT),
    Module.DONATE: (A.TEXT, A.IMAGE, A.DOCUMENT, A.GITHUB_URL, A.EXTERNAL_LINK),
    Module.TRANSLATE: (A.DOCUMENT, A.TEXT),
    Module.JUDGE: (A.TEXT,),
    Module.SHOW: (A.TEXT, A.IMAGE, A.GITHUB_URL, A.WEB_APP_URL, A.EXTERNAL_LINK),
}


class ModuleText(NamedTuple):
    purpose: str  # the specification's words, in the agent manifest
    hint: str  # what the publish form says of it


# How each module is described, everywhere it is described.
MODULE_TEXTS: dict[Module, ModuleText] = {
    Module.FUN: ModuleText("lightweight prompt tasks, quick experiments, idea generation",
                           "Lightweight prompts, quick experiments, idea generation."),
    Module.ARENA: ModuleText("competitive benchmark tasks with ranked outcomes and measurable artifacts",
                             "Competitive: many claims, reviewers score each accepted submission, closing ranks "
                             "and pays."),
    Module.EXCHANGE: ModuleText("funded requests with explicit deliverables, escrow-backed bounty, settlement after "
                                "review", "Funded request with explicit deliverables; the reviewer ticks each one."),
    Module.CREW: ModuleText("collaboration and open-source implementation work, repository-based",
                            "Open-source work on a repository; results are GitHub URLs or text."),
    Module.DONATE: ModuleText("mission-driven and public-good tasks",
                              "Public-good work; anyone may add funds to the bounty."),
    Module.TRANSLATE: ModuleText("translation work", "Translation between two languages (BCP 47 tags)."),
    Module.JUDGE: ModuleText("evaluation and review tasks; the artifact is structured written judgment",
                             "Evaluate another claim's submission; the artifact is a JSON judgment."),
    Module.SHOW: ModuleText("public showcase content and proof-of-work visibility; not part of the main "
                            "claim-and-submit loop", "Showcase only: not claimable, no bounty."),
}
URL_TYPES = frozenset({A.GITHUB_URL, A.WEB_APP_URL, A.EXTERNAL_LINK})
# Artifacts that are files: the content may be a link to them, or attachments carry them.
FILE_TYPES = frozenset({A.IMAGE, A.DOCUMENT, A.AUDIO})
GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})
MAX_CONTENT_CHARS = 100_000
_BCP47 = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")

FieldErrors = list[dict[str, str]]


def is_claimable(module: Module) -> bool:
    return module is not Module.SHOW


def allowed_types(module: str) -> list[str]:
    return [t.value for t in ALLOWED_ARTIFACT_TYPES[Module(module)]]


def is_http_url(value: str) -> bool:
    """An absolute http(s) URL with a host and no whitespace."""
    if not value or any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def task_rule_errors(module: Module, fields: dict[str, Any]) -> FieldErrors:
    """Errors of a task's module-specific fields (the merged state of a create or an edit)."""
    errors: FieldErrors = []

    def refuse(field: str, message: str) -> None:
        errors.append({"field": field, "message": message})

    if module is not Module.ARENA:
        if fields.get("max_claims", 1) != 1:
            refuse("maxClaims", "only arena tasks take more than one claim")
        if fields.get("payout_split"):
            refuse("payoutSplit", "only arena tasks have a payout split")
    else:
        split = fields.get("payout_split") or [10_000]
        if len(split) > fields.get("max_claims", 1):
            refuse("payoutSplit", "has more places than maxClaims")
        if any(share <= 0 for share in split) or sum(split) != 10_000:
            refuse("payoutSplit", "shares must be above zero and add up to exactly 1")

    if module is Module.EXCHANGE and not fields.get("deliverables"):
        refuse("deliverables", "exchange tasks list at least one deliverable")
    if module is not Module.EXCHANGE and fields.get("deliverables"):
        refuse("deliverables", "only exchange tasks have deliverables")

    repository = fields.get("repository_url")
    if module is Module.CREW and not repository:
        refuse("repositoryUrl", "crew tasks name their repository")
    if repository and not is_http_url(repository):
        refuse("repositoryUrl", "must be an absolute http(s) URL")

    source, target = fields.get("source_language"), fields.get("target_language")
    if module is Module.TRANSLATE:
        for name, value in (("sourceLanguage", source), ("targetLanguage", target)):
            if not value:
                refuse(name, "translate tasks need both languages (BCP 47 tags such as en or pt-BR)")
            elif not _BCP47.match(value):
                refuse(name, "is not a BCP 47 language tag")
        if source and target and source.lower() == target.lower():
            refuse("targetLanguage", "must differ from sourceLanguage")
    elif source or target:
        refuse("sourceLanguage" if source else "targetLanguage", "only translate tasks have languages")

    if module is Module.JUDGE:
        if not fields.get("target_claim_id"):
            refuse("targetClaimId", "judge tasks name the claim they evaluate")
        rubric = fields.get("rubric")
        if rubric is not None:
            try:
                jsonschema.Draft202012Validator.check_schema(rubric)
            except jsonschema.SchemaError as exc:
                refuse("rubric", f"is not a valid JSON Schema: {exc.message}")
    else:
        if fields.get("target_claim_id"):
            refuse("targetClaimId", "only judge tasks target a claim")
        if fields.get("rubric") is not None:
            refuse("rubric", "only judge tasks have a rubric")

    if module is Module.SHOW and fields.get("bounty_cents", 0) != 0:
        refuse("bountyAmount", "show tasks are not claimable, so they carry no bounty")
    return errors


def submission_errors(
    module: Module,
    result_type: str,
    content: str | None,
    attachment_types: list[str],
    rubric: dict[str, Any] | None,
) -> FieldErrors:
    """Errors of a submission against its task's module (empty when it may be recorded)."""
    allowed = allowed_types(module)
    if result_type not in allowed:
        return [{"field": "resultType",
                 "message": f"{result_type!r} is not allowed in {module} tasks; allowed: {', '.join(allowed)}"}]
    errors: FieldErrors = []
    for index, kind in enumerate(attachment_types):
        if kind not in allowed:
            errors.append({"field": f"attachments.{index}.type",
                           "message": f"{kind!r} is not allowed in {module} tasks"})
    kind = ArtifactType(result_type)
    if content is not None and len(content) > MAX_CONTENT_CHARS:
        errors.append({"field": "content", "message": f"at most {MAX_CONTENT_CHARS} characters"})
    elif kind in URL_TYPES:
        if not content:
            errors.append({"field": "content", "message": f"{result_type} content is required: a durable URL"})
        elif not is_http_url(content):
            errors.append({"field": "content", "message": f"{result_type} content must be an absolute http(s) URL"})
        elif kind is A.GITHUB_URL and module is Module.CREW and _host(content) not in GITHUB_HOSTS:
            errors.append({"field": "content", "message": "crew github_url content must point into github.com"})
    elif kind is A.TEXT and not (content and content.strip()):
        errors.append({"field": "content", "message": "text content is required"})
    elif kind in FILE_TYPES and not content and not attachment_types:
        errors.append({"field": "content", "message": f"a {result_type} needs content (a URL) or an attachment"})
    if not errors and module is Module.JUDGE and content:
        errors.extend(_judgment_errors(content, rubric))
    return errors


def _judgment_errors(content: str, rubric: dict[str, Any] | None) -> FieldErrors:
    try:
        judgment = json.loads(content)
    except ValueError:
        return [{"field": "content", "message": "a judgment is a JSON object with verdict, score and rationale"}]
    if not isinstance(judgment, dict):
        return [{"field": "content", "message": "a judgment is a JSON object with verdict, score and rationale"}]
    errors: FieldErrors = []
    if not isinstance(judgment.get("verdict"), str) or not judgment["verdict"].strip():
        errors.append({"field": "content.verdict", "message": "a non-empty string is required"})
    score = judgment.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        errors.append({"field": "content.score", "message": "a number is required"})
    if not isinstance(judgment.get("rationale"), str) or not judgment["rationale"].strip():
        errors.append({"field": "content.rationale", "message": "a non-empty string is required"})
    if not errors and rubric is not None:
        try:
            for error in jsonschema.Draft202012Validator(rubric).iter_errors(judgment):
                path = ".".join(str(part) for part in error.absolute_path)
                errors.append({"field": "content" + (f".{path}" if path else ""), "message": error.message})
        except Exception as exc:  # e.g. a $ref that cannot be resolved: the rubric, not the caller, is at fault
            errors.append({"field": "content", "message": f"the task's rubric cannot be applied: {exc}"})
    return errors
