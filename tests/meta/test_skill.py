"""skill.md stands on its own: Agent Skills front matter, the MCP tools, and every example replayed live.

An example is an ``<!-- example: NAME [as=WHO] [task=MODULE] [setup=STATE] -->`` marker followed by
two fenced ``http`` blocks, the request and the response. The replay sends the request as written
(``$BOUNTYBOARD_API_KEY``, ``{task_id}`` and ``{claim_id}`` filled in) and checks the answer: the
same status, the shown headers, and every shown JSON key present, with equal values for the
fields an agent decides on (status, nextAction, reviewState, code, ...).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import yaml

from bountyboard.error_codes import UPLOAD_CODES, ErrorCode
from bountyboard.mcp_server.tools import TOOLS
from tests.client.loop import Marketplace, loop_server_fixture
from tests.support.api import BOT_SCOPES, Admin, Bot
from tests.support.server import LiveServer

# Upload limits other than the defaults, so the test sees skill.md and the manifest read the settings.
UPLOAD_LIMITS = {"BOUNTYBOARD_UPLOAD_MAX_FILE_BYTES": str(3 * 1024**2),
                 "BOUNTYBOARD_UPLOAD_MAX_CLAIM_BYTES": str(7 * 1024**2)}
skill_server = loop_server_fixture(env=UPLOAD_LIMITS, scope="module")

MARKER = re.compile(r"<!-- example: (?P<name>\S+)(?P<options>[^>]*?)\s*-->\s*"
                    r"```http\n(?P<request>.*?)```\s*```http\n(?P<response>.*?)```", re.S)
# Values an agent branches on: the replay requires them equal, not just present.
DECISIVE = {"actorType", "status", "nextAction", "reviewState", "code", "module", "resultType", "scopes",
            "allowedArtifactTypes", "requiredScopes", "field", "message", "currentStatus", "type"}
MODULE_FIELDS: dict[str, dict[str, Any]] = {
    "crew": {"repositoryUrl": "https://github.com/example/project"},
    "translate": {"sourceLanguage": "en", "targetLanguage": "fr"},
    "exchange": {"deliverables": ["the summary", "the table of sources"]},
}


@dataclass
class Example:
    name: str
    options: dict[str, str]
    method: str
    path: str
    headers: dict[str, str]
    body: str
    status: int
    answer_headers: dict[str, str]
    answer: Any = field(default=None)


def _message(text: str) -> tuple[str, dict[str, str], str]:
    head, _, body = text.partition("\n\n")
    first, *lines = head.strip().splitlines()
    headers = dict(line.split(": ", 1) for line in lines)
    return first, headers, body.strip()


def examples(markdown: str) -> list[Example]:
    found = []
    for match in MARKER.finditer(markdown):
        options = dict(option.split("=", 1) for option in match["options"].split())
        request_line, headers, body = _message(match["request"])
        method, path, _ = request_line.split(" ")
        status_line, answer_headers, answer = _message(match["response"])
        found.append(Example(match["name"], options, method, path, headers, body, int(status_line.split(" ")[1]),
                             answer_headers, json.loads(answer) if answer else None))
    return found


def same_shape(shown: Any, actual: Any, where: str = "") -> None:
    if isinstance(shown, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r}"
        for key, value in shown.items():
            assert key in actual, f"{where}.{key} missing from {actual}"
            if key in DECISIVE and not isinstance(value, dict):
                assert actual[key] == value, f"{where}.{key}: {actual[key]!r} != {value!r}"
            else:
                same_shape(value, actual[key], f"{where}.{key}")
    elif isinstance(shown, list) and shown:
        assert isinstance(actual, list) and actual, f"{where}: {actual!r}"
        same_shape(shown[0], actual[0], f"{where}[0]")


class Replay:
    """The state an agent following skill.md would have: its key, its task, its claim."""

    def __init__(self, server: LiveServer, market: Marketplace) -> None:
        self.server = server
        self.market = market
        self.task = market.publish("fun")
        self.reader = market.operator.bot(scopes=["tasks:read", "claims:read"])
        self.bindings = {"task_id": self.task["id"], "claim_id": ""}

    def _worker(self) -> Bot:
        return self.market.operator.bot(scopes=BOT_SCOPES)

    def _submitted_claim(self) -> str:
        target = self.market.publish("fun")
        worker = self._worker()
        claim_id = worker.http.post(f"/v1/agent/tasks/{target['id']}/claim").json()["claimId"]
        submitted = worker.http.post(f"/v1/agent/claims/{claim_id}/submit", json={"resultType": "text",
                                                                                 "content": "A haiku."})
        assert submitted.status_code == 200, submitted.text
        return str(claim_id)

    def prepare(self, example: Example) -> tuple[str | None, dict[str, str]]:
        """The key the example acts with and the ids it names."""
        bindings = dict(self.bindings)
        key: str | None = self.market.bot.key
        module = example.options.get("task")
        if module:
            fields = MODULE_FIELDS.get(module, {})
            if module == "judge":
                fields = {"targetClaimId": self._submitted_claim()}
            task = self.market.publish(module, **fields)
            worker = self._worker()
            claimed = worker.http.post(f"/v1/agent/tasks/{task['id']}/claim")
            assert claimed.status_code == 200, claimed.text
            key, bindings = worker.key, {"task_id": task["id"], "claim_id": claimed.json()["claimId"]}
        if example.options.get("setup") == "rejected":
            self.market.review(bindings["claim_id"], "reject", "Not a haiku.")
        if example.name == "claim-taken":
            taken = self.market.publish("fun")
            assert self._worker().http.post(f"/v1/agent/tasks/{taken['id']}/claim").status_code == 200
            bindings["task_id"] = taken["id"]
        who = example.options.get("as")
        if who == "reader":
            key = self.reader.key
        elif who == "nobody":
            key = None
        return key, bindings

    def send(self, example: Example) -> httpx.Response:
        key, bindings = self.prepare(example)
        path = example.path.format(**bindings)
        headers = {name: value.replace("$BOUNTYBOARD_API_KEY", key or "")
                   for name, value in example.headers.items() if key or name != "Authorization"}
        answer = httpx.request(example.method, self.server.base_url + path, headers=headers,
                               content=example.body.encode() or None, timeout=30)
        if example.name == "claim":
            self.bindings["claim_id"] = answer.json()["claimId"]
        return answer


@pytest.fixture(scope="module")
def skill(skill_server: tuple[LiveServer, Admin]) -> str:
    response = httpx.get(f"{skill_server[0].base_url}/v1/meta/skill.md", timeout=30)
    assert response.status_code == 200
    return response.text


def test_skill_md_is_an_agent_skill_naming_every_mcp_tool(skill: str, skill_server: tuple[LiveServer, Admin]) -> None:
    front = re.match(r"---\n(.*?)\n---\n", skill, re.S)
    assert front, "no YAML front matter"
    meta = yaml.safe_load(front[1])
    assert meta["name"] == "bountyboard" and skill_server[0].base_url in meta["description"]
    manifest = httpx.get(f"{skill_server[0].base_url}/v1/meta/agent-manifest", timeout=30).json()
    for tool in TOOLS:
        assert f"| `{tool.name}` | `{tool.method} {tool.path}` |" in skill
    assert [tool["name"] for tool in manifest["mcp"]["tools"]] == [tool.name for tool in TOOLS]
    assert manifest["mcp"]["endpoint"] == f"{skill_server[0].base_url}/mcp"
    for module in manifest["modules"]:
        assert f"| {module['name']} | {module['purpose']} |" in skill
    for value in ("claim", "wait", "none", "submit", "wait_for_review", "wait_for_appeal", "appeal_or_done", "done"):
        assert f"| `{value}` |" in skill


def test_every_example_in_skill_md_replays_against_a_live_server(
        skill: str, skill_server: tuple[LiveServer, Admin]) -> None:
    server, admin = skill_server
    found = examples(skill)
    assert {"me", "list-tasks", "claim", "heartbeat", "submit", "submit-retry", "status", "events", "appeal",
            "submit-judge", "submit-crew", "submit-translate", "submit-exchange", "refused-scope",
            "upload-slot", "upload-too-large"} <= {
        example.name for example in found}
    assert len(found) == skill.count("<!-- example:"), "an example marker without two http blocks"
    replay = Replay(server, Marketplace(admin))
    for example in found:
        answer = replay.send(example)
        assert answer.status_code == example.status, f"{example.name}: {answer.status_code} {answer.text}"
        for name, value in example.answer_headers.items():
            if name == "Content-Type":
                assert answer.headers[name].startswith(value), example.name
            else:
                assert answer.headers.get(name) == value, f"{example.name}: {name}"
        if example.answer is not None:
            same_shape(example.answer, answer.json(), example.name)


def test_the_replay_notices_a_wrong_example() -> None:
    """The checker itself: a shown value an agent decides on must be the one answered."""
    with pytest.raises(AssertionError):
        same_shape({"nextAction": "submit"}, {"nextAction": "wait_for_review"})
    with pytest.raises(AssertionError):
        same_shape({"data": [{"id": "x", "extra": 1}]}, {"data": [{"id": "y"}]})
    same_shape({"data": [{"id": "x"}]}, {"data": [{"id": "y", "more": 2}]})


def test_every_error_code_in_skill_md_is_one_the_service_answers(skill: str) -> None:
    """The error table names catalogued codes (bountyboard.error_codes), each with a status it comes with."""
    table = skill.split("## Errors and what to do", 1)[1].split("\n\n<!--", 1)[0]
    rows = [(row.split("|")[1].strip(), code) for row in table.splitlines() if row.startswith("| 4")
            for code in re.findall(r"`([a-z_]+)`", row.split("|")[2])]
    assert {"insufficient_scope", "already_submitted", "idempotency_key_mismatch", "rate_limited"} <= {
        code for _, code in rows}
    for status, code in rows:
        assert code in set(ErrorCode), f"{code} is not a code the service answers"
        assert int(status) in ErrorCode(code).statuses, f"{code} is not answered with {status}"


def test_skill_md_and_the_manifest_give_the_upload_limits_and_every_upload_error(
        skill: str, skill_server: tuple[LiveServer, Admin]) -> None:
    """The limits are the server's settings (not the defaults here), the codes every one of UPLOAD_CODES."""
    manifest = httpx.get(f"{skill_server[0].base_url}/v1/meta/agent-manifest", timeout=30).json()
    assert (manifest["limits"]["uploadMaxFileBytes"], manifest["limits"]["uploadMaxClaimBytes"]) == (
        3 * 1024**2, 7 * 1024**2)
    uploads = manifest["uploads"]
    assert (uploads["maxFileBytes"], uploads["maxClaimBytes"]) == (3 * 1024**2, 7 * 1024**2)
    assert uploads["openSlot"]["path"] == "/v1/agent/claims/{id}/uploads"
    assert [(e["code"], e["statuses"]) for e in uploads["errors"]] == [
        (code.value, list(code.statuses)) for code in UPLOAD_CODES]
    assert "A file may have at most 3 MiB (3145728 bytes)" in skill
    assert "the files of one claim\ntogether at most 7 MiB (7340032 bytes)" in skill
    assert "| one uploaded file | 3 MiB (3145728 bytes) |" in skill
    for code in UPLOAD_CODES:
        assert f"| `{code}` | {', '.join(map(str, code.statuses))} | {code.meaning} |" in skill
    table = skill.split("## Errors and what to do", 1)[1].split("\n\n<!--", 1)[0]
    assert all(f"`{code}`" in table for code in UPLOAD_CODES)


def test_the_upload_skill_md_shows_goes_through(skill: str, skill_server: tuple[LiveServer, Admin]) -> None:
    """The slot example's file (its bytes, size and sha256), PUT to uploadUrl and submitted as the text says."""
    server, admin = skill_server
    slot_example = next(example for example in examples(skill) if example.name == "upload-slot")
    replay = Replay(server, Marketplace(admin))
    key, bindings = replay.prepare(slot_example)
    declared = json.loads(slot_example.body)
    content = b"An old silent pond\n"
    assert (len(content), hashlib.sha256(content).hexdigest()) == (declared["sizeBytes"], declared["sha256"])
    worker = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    slot = worker.post(f"/v1/agent/claims/{bindings['claim_id']}/uploads", json=declared)
    assert slot.status_code == 201, slot.text
    sent = httpx.put(slot.json()["uploadUrl"], content=content, headers=slot.json()["headers"], timeout=30)
    assert sent.status_code == 200, sent.text
    shown = re.search(r"submit `(\{\"resultType\".*?\})`\.", skill, re.S)
    assert shown, "the Files section shows no submission with an attachment"
    body = json.loads(shown[1].replace("\n", " ").replace("upl_01jd2k3m4n5p6q7r8s9t0v1w2x", slot.json()["fileKey"]))
    submitted = worker.post(f"/v1/agent/claims/{bindings['claim_id']}/submit", json=body)
    assert submitted.status_code == 200, submitted.text
