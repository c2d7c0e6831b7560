"""``submit_result(file_paths=...)`` over stdio reads only files under ``bountyboard mcp --files-root``, never
the CLI's configuration or state (where the API key is), whatever path or link names them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.cli.proxy import SwallowingProxy
from tests.client.loop import Marketplace
from tests.mcp.support import answer, problem, stdio_client
from tests.support.api import Admin
from tests.support.server import LiveServer


def _claimed(market: Marketplace) -> tuple[str, str]:
    task = market.publish("arena")  # takes documents: a JSON file would be attached
    created = market.bot.http.post(f"/v1/agent/tasks/{task['id']}/claim")
    assert created.status_code == 200, created.text
    return task["id"], created.json()["claimId"]


def _saved_login(config_dir: Path, key: str) -> Path:
    """The file ``bountyboard login`` writes, holding the key."""
    config_dir.mkdir(parents=True)
    config = config_dir / "config.json"
    config.write_text(json.dumps({"baseUrl": "http://127.0.0.1:1", "apiKey": key}))
    return config


def _submitted(market: Marketplace, task_id: str) -> list[dict[str, Any]]:
    return [claim["submission"] for claim in market.claims_of(task_id) if claim["submission"] is not None]


def test_without_a_files_root_no_local_file_is_read(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                                    tmp_path: Path) -> None:
    """The bot's own saved key, named to submit_result, would be attached to the submission for the publisher."""
    server, _ = loop_server
    task_id, claim_id = _claimed(market)
    config = _saved_login(tmp_path / "config", market.bot.key)
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n")
    env = {"BOUNTYBOARD_CONFIG_DIR": str(config.parent), "BOUNTYBOARD_STATE_DIR": str(tmp_path / "state")}

    async def work(base_url: str) -> None:
        async with stdio_client(base_url, market.bot.key, env=env) as client:
            for path in (config, notes):
                refused = problem(await client.call_tool("submit_result", {
                    "claim_id": claim_id, "result_type": "text", "content": "Done.", "file_paths": [str(path)]}))
                assert (refused["status"], refused["code"]) == (422, "file_path_not_allowed"), refused
                assert "--files-root" in refused["detail"]

    with SwallowingProxy(server.base_url) as proxy:
        asyncio.run(work(proxy.url))
    assert proxy.forwarded == []  # no upload slot asked for, nothing submitted
    assert _submitted(market, task_id) == []


def test_only_files_under_the_root_and_outside_the_config_and_state_are_uploaded(
        loop_server: tuple[LiveServer, Admin], market: Marketplace, tmp_path: Path) -> None:
    server, _ = loop_server
    task_id, claim_id = _claimed(market)
    root = tmp_path / "work"
    root.mkdir()
    notes = b"# Notes\n\nAll done.\n"
    (root / "notes.md").write_bytes(notes)
    # The configuration and state directories inside the root: still never read.
    config = _saved_login(root / ".config" / "bountyboard", market.bot.key)
    state = root / ".state" / "bountyboard"
    state.mkdir(parents=True)
    (state / "state-0123456789abcdef.json").write_text("{}")
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the publisher")
    (root / "innocent.txt").symlink_to(outside)
    (root / "settings.json").symlink_to(config)
    (root / "up").symlink_to(tmp_path, target_is_directory=True)
    env = {"BOUNTYBOARD_CONFIG_DIR": str(config.parent), "BOUNTYBOARD_STATE_DIR": str(state)}
    refused_names = [str(outside), "../secret.txt", "innocent.txt", "up/secret.txt", "/etc/hostname", str(config),
                     ".config/bountyboard/config.json", "settings.json",
                     ".state/bountyboard/state-0123456789abcdef.json"]

    async def work(base_url: str) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        async with stdio_client(base_url, market.bot.key, "--files-root", str(root), env=env) as client:
            for name in refused_names:
                # A refused name spoils the whole call: not even the allowed file beside it is sent.
                refused = problem(await client.call_tool("submit_result", {
                    "claim_id": claim_id, "result_type": "text", "content": "Done.",
                    "file_paths": ["notes.md", name]}))
                assert (refused["status"], refused["code"]) == (422, "file_path_not_allowed"), (name, refused)
            missing = problem(await client.call_tool("submit_result", {
                "claim_id": claim_id, "result_type": "text", "content": "Done.", "file_paths": ["nope.md"]}))
            assert missing["code"] == "file_not_found"
            sent_while_refusing = list(proxy.forwarded)
            receipt = answer(await client.call_tool("submit_result", {
                "claim_id": claim_id, "result_type": "text", "content": "Done.", "file_paths": ["notes.md"]}))
            return receipt, sent_while_refusing

    with SwallowingProxy(server.base_url) as proxy:
        receipt, sent_while_refusing = asyncio.run(work(proxy.url))
    assert sent_while_refusing == []
    [submission] = _submitted(market, task_id)
    assert submission["id"] == receipt["submissionId"]
    assert [(item["fileName"], item["sizeBytes"]) for item in submission["attachments"]] == [("notes.md", len(notes))]
