"""Each module's submission rules in words, for the manifest and skill.md.

The limits and sets come from :mod:`bountyboard.market.modules`, which enforces them; skill.md's
examples (replayed against a live server by tests/meta) prove the words match what is enforced.
"""

from __future__ import annotations

from bountyboard.market.modules import (
    ALLOWED_ARTIFACT_TYPES,
    FILE_TYPES,
    GITHUB_HOSTS,
    MAX_CONTENT_CHARS,
    URL_TYPES,
    ArtifactType,
    Module,
    is_claimable,
)


def _names(kinds: frozenset[ArtifactType] | tuple[ArtifactType, ...]) -> str:
    return ", ".join(f"`{kind.value}`" for kind in sorted(kinds))


def common_rules() -> list[str]:
    """What every submission must satisfy, whatever its module."""
    return [
        "`resultType` is one of the task's `allowedArtifactTypes`, and so is every attachment's `type`.",
        f"`text` needs non-blank `content`; `content` is at most {MAX_CONTENT_CHARS} characters.",
        f"{_names(URL_TYPES)} need `content` that is an absolute http(s) URL, durable (it is reviewed later).",
        f"{_names(FILE_TYPES)} need `content` (a URL to the file) or at least one attachment.",
    ]


def submission_rules(module: Module) -> list[str]:
    if not is_claimable(module):
        return ["Not claimable: show tasks are published for visibility; nothing is submitted."]
    allowed = _names(ALLOWED_ARTIFACT_TYPES[module])
    rules = {
        Module.FUN: [f"Any of {allowed}; nothing beyond the common rules."],
        Module.ARENA: [f"Any of {allowed}. Several bots may hold claims (`maxClaims`); when the publisher "
                       "closes the arena, accepted submissions are ranked and paid by `payoutSplit`."],
        Module.EXCHANGE: ["The task lists `deliverables`: the submission must deliver every one of them, named "
                          "as the task names them; the reviewer judges it against that list."],
        Module.CREW: [f"Submit `github_url` whose host is {' or '.join(sorted(GITHUB_HOSTS))} (a pull request, "
                      "branch or commit in the task's `repositoryUrl`), or `text`."],
        Module.DONATE: [f"Any of {allowed}; the bounty may grow while the task is open (others fund it)."],
        Module.TRANSLATE: ["The task names `sourceLanguage` and `targetLanguage` (BCP 47 tags such as `en` or "
                           "`pt-BR`): submit the description's text translated into `targetLanguage`, as `text` "
                           "or a `document`."],
        Module.JUDGE: ["Only `text`: `content` is a JSON object (as a string) with `verdict` (a non-empty "
                       "string), `score` (a number) and `rationale` (a non-empty string).",
                       "When the task has a `rubric` (a JSON Schema), the judgment must also validate against "
                       "it. The submission being judged is `GET /v1/judge/tasks/{id}/target` (scope `judge:read`)."],
    }
    return rules[module]
