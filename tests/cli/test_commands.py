"""The agent and operator commands, run as a user would run them, against a live server."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook

from tests.client.loop import Marketplace, cli_env, process_env, run_cli
from tests.support.api import Admin
from tests.support.server import LiveServer


def _arena_task(market: Marketplace) -> dict[str, Any]:
    # Not a fun task: the worker tests on this server only take fun tasks.
    return market.publish("arena", title="Sort a list", description="Fastest sort wins.")


def test_login_stores_the_key_privately_and_logout_forgets_it(loop_server: tuple[LiveServer, Admin],
                                                             market: Marketplace, tmp_path: Path) -> None:
    live, _ = loop_server
    env = cli_env(live.base_url, None, tmp_path)
    assert run_cli("whoami", env=env).returncode == 2
    logged = run_cli("login", env=env, input=market.bot.key + "\n")
    assert logged.returncode == 0, logged.stderr
    config = tmp_path / "config" / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text()) == {"baseUrl": live.base_url, "apiKey": market.bot.key}
    me = run_cli("whoami", "--json", env=env)
    assert me.returncode == 0 and json.loads(me.stdout)["botId"] == market.bot.id
    refused = run_cli("login", "--key", "svc-" + "x" * 38, env=env)
    assert refused.returncode == 1 and "refused" in refused.stderr
    assert run_cli("logout", env=env).returncode == 0
    assert "apiKey" not in json.loads(config.read_text())
    assert run_cli("whoami", env=env).returncode == 2


def test_an_argument_that_is_not_an_id_is_refused_before_any_request(
        loop_server: tuple[LiveServer, Admin], market: Marketplace, tmp_path: Path) -> None:
    live, _ = loop_server
    task = _arena_task(market)
    env = cli_env(live.base_url, market.publisher.key, tmp_path)
    for args in (["claim", f"../../../v1/tasks/{task['id']}/cancel?"], ["status", "../../../v1/profile/api-keys?"]):
        refused = run_cli(*args, "--json", env=env)
        assert refused.returncode == 1, refused.stdout
        assert refused.stdout == "" and "must be an id of the form" in refused.stderr
    assert market.publisher.http.get(f"/v1/tasks/{task['id']}").json()["status"] == "published"


def test_claim_status_submit_and_events(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                        tmp_path: Path) -> None:
    live, _ = loop_server
    env = cli_env(live.base_url, market.bot.key, tmp_path)
    task = _arena_task(market)
    listed = run_cli("tasks", "list", "--module", "arena", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert task["id"] in [t["id"] for t in json.loads(listed.stdout)["data"]]
    table = run_cli("tasks", "list", "--module", "arena", env=env)
    assert table.stdout.startswith("Tasks (page 1, ") and "arena" in table.stdout
    shown = json.loads(run_cli("tasks", "show", task["id"], "--json", env=env).stdout)
    assert shown["allowedArtifactTypes"][0] == "text"

    claimed = run_cli("claim", task["id"], "--json", env=env)
    assert claimed.returncode == 0, claimed.stderr
    claim_id = json.loads(claimed.stdout)["claimId"]
    state = json.loads(next((tmp_path / "state").glob("state-*.json")).read_text())
    assert claim_id in state["claims"]  # persisted by the SDK
    status = json.loads(run_cli("status", claim_id, "--json", env=env).stdout)
    assert (status["status"], status["nextAction"]) == ("active", "submit")

    answer = tmp_path / "answer.md"
    answer.write_text("def sort(xs): return sorted(xs)\n")
    args = ["submit", claim_id, "--type", "text", "--content-file", str(answer),
            "--attachment", "type=document,fileName=bench.pdf,mimeType=application/pdf,sizeBytes=2048", "--json"]
    first = run_cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    receipt = json.loads(first.stdout)
    assert receipt["reviewState"] == "pending"
    # The status table says when review is due and where the money is (an arena escalates at the deadline).
    submitted = run_cli("status", claim_id, env=env).stdout
    assert "reviewDueAt" in submitted and "escrowed (" in submitted, submitted
    again = run_cli(*args, env=env)  # a retry is answered with the same receipt, not a second submission
    assert json.loads(again.stdout)["submissionId"] == receipt["submissionId"]
    [claim] = market.claims_of(task["id"])
    assert claim["submission"]["attachments"][0]["fileName"] == "bench.pdf"

    events = run_cli("events", "--types", "task.claimed,claim.submitted", "--json", env=env)
    mine = [json.loads(line) for line in events.stdout.splitlines()]
    assert [(e["type"], e["data"]["claimId"]) for e in mine if e["data"]["taskId"] == task["id"]] == [
        ("task.claimed", claim_id), ("claim.submitted", claim_id)]
    invalid = run_cli("submit", claim_id, "--type", "text", "--content", "another answer", env=env)
    assert invalid.returncode == 1 and "409" in invalid.stderr


def test_user_text_is_printed_literally_never_as_markup(loop_server: tuple[LiveServer, Admin],
                                                       market: Marketplace, tmp_path: Path) -> None:
    live, _ = loop_server
    title = "[/oops] [bold]not bold[/bold] [tasks:read]"
    task = market.publish("arena", title=title)
    env = cli_env(live.base_url, market.bot.key, tmp_path)
    shown = run_cli("tasks", "show", task["id"], env=env)
    assert shown.returncode == 0, shown.stderr
    assert title in shown.stdout
    assert run_cli("tasks", "list", "--module", "arena", env=env).returncode == 0
    missing = run_cli("status", "[/clm]", env=env)
    assert missing.returncode == 1 and "[/clm]" in missing.stderr
    market.publisher.http.post(f"/v1/tasks/{task['id']}/cancel")


def test_a_missing_scope_is_refused_before_anything_is_sent(loop_server: tuple[LiveServer, Admin],
                                                            market: Marketplace, tmp_path: Path) -> None:
    live, _ = loop_server
    reader = market.operator.bot(scopes=["tasks:read"])
    task = _arena_task(market)
    refused = run_cli("claim", task["id"], env=cli_env(live.base_url, reader.key, tmp_path))
    assert refused.returncode == 3
    assert "tasks:claim" in refused.stderr
    assert market.claims_of(task["id"]) == []
    market.publisher.http.post(f"/v1/tasks/{task['id']}/cancel")


def test_operator_commands(loop_server: tuple[LiveServer, Admin], market: Marketplace, tmp_path: Path) -> None:
    live, _ = loop_server
    env = cli_env(live.base_url, market.operator.key, tmp_path)
    created = run_cli("bots", "create", "scribe-7", "--json", env=env)
    assert created.returncode == 0, created.stderr
    bot = json.loads(created.stdout)
    assert bot["name"] in [b["name"] for b in json.loads(run_cli("bots", "--json", env=env).stdout)]
    assert "scribe-7" in run_cli("bots", env=env).stdout

    key = run_cli("keys", "create", "--kind", "bot", "--bot", bot["id"], "--json", env=env)
    assert key.returncode == 0, key.stderr
    made = json.loads(key.stdout)
    assert made["key"].startswith("svc-")
    assert sorted(made["scopes"]) == ["claims:read", "claims:submit", "tasks:claim", "tasks:read"]
    assert made["id"] in [k["id"] for k in json.loads(run_cli("keys", "--json", env=env).stdout)]
    assert run_cli("keys", "revoke", made["id"], env=env).returncode == 0
    assert run_cli("whoami", env=cli_env(live.base_url, made["key"], tmp_path / "b")).returncode == 1

    hook = run_cli("webhooks", "create", "http://127.0.0.1:9/hook", "--json", env=env)
    assert hook.returncode == 0, hook.stderr
    webhook = json.loads(hook.stdout)
    assert webhook["secret"].startswith("whsec_")
    assert webhook["id"] in [w["id"] for w in json.loads(run_cli("webhooks", "--json", env=env).stdout)]
    assert run_cli("webhooks", "delete", webhook["id"], env=env).returncode == 0
    assert json.loads(run_cli("webhooks", "--json", env=env).stdout) == []


class Receiver:
    """A local endpoint that records what ``listen`` forwards."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.received.append((dict(self.headers), body))
                receiver.arrived.set()
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.server.shutdown()
    endpoint.server.server_close()


def test_listen_forwards_new_events_signed(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                           receiver: Receiver, tmp_path: Path) -> None:
    live, _ = loop_server
    env = cli_env(live.base_url, market.bot.key, tmp_path, PYTHONUNBUFFERED="1")
    # An older event of the bot, which listen must not forward: it follows from now on.
    earlier = market.bot.http.post(f"/v1/agent/tasks/{_arena_task(market)['id']}/claim").json()
    assert market.bot.http.post(f"/v1/agent/claims/{earlier['claimId']}/release").status_code == 200
    task = _arena_task(market)
    argv = [sys.executable, "-m", "bountyboard", "listen", "--forward-to", receiver.url, "--poll-interval", "0.1"]
    process = subprocess.Popen(argv, env=process_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        secret = next(word for word in ready.split() if word.startswith("whsec_"))
        claimed = market.bot.http.post(f"/v1/agent/tasks/{task['id']}/claim").json()
        assert receiver.arrived.wait(30), "nothing was forwarded"
    finally:
        process.terminate()
        process.communicate(timeout=30)
    [(headers, body)] = receiver.received  # only the new event, not the bot's older ones
    lowered = {k.lower(): v for k, v in headers.items()}
    payload = Webhook(secret).verify(body, lowered)
    assert payload["type"] == "task.claimed"
    assert payload["data"]["claimId"] == claimed["claimId"]
    assert lowered["webhook-id"].startswith("evt_")
