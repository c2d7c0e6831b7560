"""The reviewer's and the bot's side of a decision, from the CLI alone, against a live server: the reviewer
sees the work and its files before deciding, ticks an exchange's deliverables, and the bot's operator
appeals a rejection, extends a claim and gives one back."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from tests.client.loop import WORKER_SCOPES, Marketplace, cli_env, run_cli
from tests.files import samples
from tests.support.api import Admin
from tests.support.server import LiveServer

# The README's reviewer key: it reviews and reads tasks, and nothing else.
README_REVIEWER_SCOPES = ["claims:review", "tasks:read"]


def _ok(*args: str, env: dict[str, str | None]) -> str:
    ran = run_cli(*args, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def _claimed(task_id: str, env: dict[str, str | None]) -> str:
    return str(json.loads(_ok("claim", task_id, "--json", env=env))["claimId"])


def test_the_readme_reviewer_sees_the_work_downloads_its_file_and_ticks_the_deliverables(
        loop_server: tuple[LiveServer, Admin], market: Marketplace, tmp_path: Path) -> None:
    live, admin = loop_server
    bot = admin.account("operator").bot(name="scribe-of-exchanges", scopes=WORKER_SCOPES)
    bot_env = cli_env(live.base_url, bot.key, tmp_path / "bot")
    task = market.publish("exchange", deliverables=["README.md with usage", "Examples that run"])
    claim_id = _claimed(task["id"], bot_env)
    report = tmp_path / "report.pdf"
    report.write_bytes(samples.pdf("The examples run."))
    _ok("submit", claim_id, "--type", "document", "--content", "The README and its examples.",
        "--file", str(report), env=bot_env)

    reviewer = admin.account("reviewer", scopes=README_REVIEWER_SCOPES)
    env = cli_env(live.base_url, reviewer.key, tmp_path / "reviewer")
    shown = _ok("review", "queue", "--module", "exchange", env=env)
    record = shown[shown.index(claim_id):]
    for expected in ("The README and its examples.", "report.pdf", "application/pdf",
                     "1. README.md with usage", "2. Examples that run", f"scribe-of-exchanges ({bot.id})"):
        assert expected in record, shown
    links = re.findall(r"https?://\S+/v1/files/\S+/content\?\S+", record)
    assert links, shown
    downloaded = httpx.get(links[0], timeout=30)  # the signed link alone, as printed
    assert downloaded.status_code == 200 and downloaded.content == report.read_bytes()

    queued = json.loads(_ok("review", "queue", "--module", "exchange", "--json", env=env))
    [mine] = [claim for claim in queued["data"] if claim["id"] == claim_id]
    [attachment] = mine["submission"]["attachments"]
    assert attachment["fileName"] == "report.pdf" and attachment["downloadUrl"].startswith(live.base_url)
    # The key itself reads the file: the link endpoint answers the README's reviewer.
    link = reviewer.http.get(f"/v1/files/{attachment['fileKey']}/link")
    assert link.status_code == 200, link.text
    assert httpx.get(link.json()["downloadUrl"], timeout=30).content == report.read_bytes()

    refused = run_cli("review", "decide", claim_id, "--accept", env=env)
    assert refused.returncode == 1 and "deliverables_incomplete" in refused.stderr
    half = run_cli("review", "decide", claim_id, "--accept", "--deliverable", "1=true", "--deliverable", "2=false",
                   env=env)
    assert half.returncode == 1 and "Examples that run" in half.stderr
    gap = run_cli("review", "decide", claim_id, "--accept", "--deliverable", "2=true", env=env)
    assert gap.returncode == 2 and "missing: 1" in gap.stderr
    decided = json.loads(_ok("review", "decide", claim_id, "--accept", "--deliverable", "1=true",
                             "--deliverable", "2=true", "--comment", "Both there.", "--json", env=env))
    assert decided["status"] == "accepted"
    status = json.loads(_ok("status", claim_id, "--json", env=bot_env))
    assert (status["status"], status["deliverables"]) == ("accepted", [True, True])


def test_only_reviewers_of_the_task_read_its_files(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                   tmp_path: Path) -> None:
    live, admin = loop_server
    bot = admin.account("operator").bot(scopes=WORKER_SCOPES)
    bot_env = cli_env(live.base_url, bot.key, tmp_path / "bot")
    task = market.publish("arena", title="Draw a pond")
    claim_id = _claimed(task["id"], bot_env)
    drawing = tmp_path / "pond.png"
    drawing.write_bytes(samples.png())
    receipt = json.loads(_ok("submit", claim_id, "--type", "image", "--file", str(drawing), "--json", env=bot_env))
    assert receipt["reviewState"] == "pending"
    [claim] = market.claims_of(task["id"])
    file_key = claim["submission"]["attachments"][0]["fileKey"]

    # A publisher reviews its own tasks only: another task's files are not there for it.
    other_publisher = admin.account("publisher")
    theirs = other_publisher.http.post("/v1/tasks", json={"module": "arena", "title": "Their own task"})
    assert other_publisher.http.post(f"/v1/tasks/{theirs.json()['id']}/publish").status_code == 200
    answer = other_publisher.http.get(f"/v1/files/{file_key}/link")
    assert answer.status_code == 404 and answer.json()["code"] == "not_found", answer.text
    # A reviewer and an admin read it with claims:review alone; the task's publisher with its claims:read.
    readers = [admin.account(role, scopes=["claims:review"]) for role in ("reviewer", "admin")]
    for reader in [*readers, market.publisher]:
        answer = reader.http.get(f"/v1/files/{file_key}/link")
        assert answer.status_code == 200, answer.text
    # A key that neither holds nor reviews: refused, naming the scope.
    narrow = admin.account("reviewer", scopes=["tasks:read"])
    answer = narrow.http.get(f"/v1/files/{file_key}/link")
    assert answer.status_code == 403 and answer.json()["code"] == "insufficient_scope", answer.text
    # The bot's operator, with a key that may not read claims, reads nothing either.
    answer = httpx.get(f"{live.base_url}/v1/files/{file_key}/link",
                       headers={"Authorization": f"Bearer {bot.operator.new_key(['tasks:read'])}"})
    assert answer.status_code == 403, answer.text
    market.review(claim_id, "reject", "Not a pond.")


def test_an_operator_appeals_a_rejection_from_the_cli(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                      tmp_path: Path) -> None:
    live, admin = loop_server
    bot = admin.account("operator").bot(scopes=WORKER_SCOPES)
    env = cli_env(live.base_url, bot.key, tmp_path)
    task = market.publish("arena", title="Sort a list")
    claim_id = _claimed(task["id"], env)
    _ok("submit", claim_id, "--type", "text", "--content", "sorted()", env=env)
    market.review(claim_id, "reject", "Too short.")

    opened = run_cli("appeal", claim_id, "--reason", "It is the fastest sort there is.",
                     "--evidence", "https://example.com/timsort", "--json", env=env)
    assert opened.returncode == 0, opened.stderr
    appeal = json.loads(opened.stdout)
    assert (appeal["claimId"], appeal["status"], appeal["evidenceUrls"]) == (
        claim_id, "open", ["https://example.com/timsort"])
    status = json.loads(_ok("status", claim_id, "--json", env=env))
    assert (status["reviewState"], status["appealId"]) == ("appealed", appeal["id"])
    again = run_cli("appeal", claim_id, "--reason", "Once more.", env=env)
    assert again.returncode == 1 and "409" in again.stderr


def _expiry(env: dict[str, str | None], claim_id: str) -> datetime:
    status: dict[str, Any] = json.loads(_ok("status", claim_id, "--json", env=env))
    return datetime.fromisoformat(status["expiresAt"].replace("Z", "+00:00"))


def test_heartbeat_extends_a_claim_and_release_gives_it_back(loop_server: tuple[LiveServer, Admin],
                                                             market: Marketplace, tmp_path: Path) -> None:
    live, admin = loop_server
    bot = admin.account("operator").bot(scopes=WORKER_SCOPES)
    env = cli_env(live.base_url, bot.key, tmp_path)
    task = market.publish("arena", title="Count the frogs")
    claim_id = _claimed(task["id"], env)
    before = _expiry(env, claim_id)

    beat = run_cli("heartbeat", claim_id, env=env)
    assert beat.returncode == 0, beat.stderr
    assert claim_id in beat.stdout and "active" in beat.stdout
    assert _expiry(env, claim_id) > before

    released = run_cli("release", claim_id, env=env)
    assert released.returncode == 0, released.stderr
    assert "released" in released.stdout
    assert json.loads(_ok("status", claim_id, "--json", env=env))["status"] == "released"
    state = json.loads(next((tmp_path / "state").glob("state-*.json")).read_text())
    assert claim_id not in state["claims"]  # forgotten by the SDK's state file
    late = run_cli("heartbeat", claim_id, env=env)
    assert late.returncode == 1 and "409" in late.stderr
