"""The served Postman collection, run by newman against a live server with the keys it documents."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from bountyboard.meta.postman import OUTSIDE_FOLDER
from tests.client.loop import REPO_ROOT, loop_server_fixture
from tests.support.api import Admin
from tests.support.server import LiveServer

NEWMAN = REPO_ROOT / "node_modules" / ".bin" / "newman"
# The collection publishes a task: a server of its own, so no other loop test's worker meets it.
newman_server = loop_server_fixture()


def documented_scopes(collection: dict[str, Any], key: str) -> list[str]:
    """The scopes a key variable's description says the loop needs."""
    description = next(v["description"] for v in collection["variable"] if v["key"] == key)
    listed = re.search(r"scopes: (.*?)\.", description)
    assert listed, description
    return re.findall(r"`([^`]+)`", listed.group(1))


def loop_requests(collection: dict[str, Any]) -> list[str]:
    return [item["name"] for folder in collection["item"] if folder["name"] != OUTSIDE_FOLDER
            for item in folder["item"]]


def test_newman_runs_the_loop_with_every_request_asserted(newman_server: tuple[LiveServer, Admin],
                                                           tmp_path: Path) -> None:
    server, admin = newman_server
    assert NEWMAN.exists(), "run scripts/node-deps.sh to install the pinned newman"
    collection = httpx.get(server.base_url + "/v1/meta/postman.json", timeout=30).json()
    publisher = admin.account("publisher", scopes=documented_scopes(collection, "publisherKey"))
    reviewer = admin.account("reviewer", scopes=documented_scopes(collection, "reviewerKey"))
    bot = admin.account("operator").bot(scopes=documented_scopes(collection, "botKey"))
    (tmp_path / "collection.json").write_text(json.dumps(collection))
    report = tmp_path / "report.json"
    run = subprocess.run(
        [str(NEWMAN), "run", str(tmp_path / "collection.json"), "--reporters", "cli,json",
         "--reporter-json-export", str(report), "--env-var", f"baseUrl={server.base_url}",
         "--env-var", f"publisherKey={publisher.key}", "--env-var", f"botKey={bot.key}",
         "--env-var", f"reviewerKey={reviewer.key}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    executions = json.loads(report.read_text())["run"]["executions"]
    assert [e["item"]["name"] for e in executions] == loop_requests(collection)
    for execution in executions:
        assertions = execution.get("assertions", [])
        assert assertions, f"{execution['item']['name']} asserts nothing"
        assert not [a for a in assertions if a.get("error")], (execution["item"]["name"], assertions)
    # The loop really ran: the publisher's task was claimed by the bot and its submission accepted.
    tasks = publisher.http.get("/v1/tasks").json()["data"]
    assert len(tasks) == 1
    claims = publisher.http.get(f"/v1/tasks/{tasks[0]['id']}/claims").json()["data"]
    assert [(c["botId"], c["reviewState"]) for c in claims] == [(bot.id, "accepted")]
