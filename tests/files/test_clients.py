"""Uploading with the SDK (both clients) and ``bountyboard submit --file``, on each storage backend."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bountyboard.client import AsyncClient, Client, attachment_of
from bountyboard.client.state import StateFile
from tests.client.loop import cli_env, run_cli
from tests.files import samples
from tests.files.support import FileServer
from tests.market.support import Market, claim, ok
from tests.mcp.support import answer, http_client, problem, stdio_client
from tests.support.api import Account, Bot
from tests.support.typescript import built_example, served_example_of_the_package


def _claimed(market: Market) -> tuple[Account, Bot, str, str]:
    publisher = market.publisher(funds=100)
    task = market.task(publisher, "arena", bounty=10)
    bot = market.operator().bot()
    return publisher, bot, task["id"], claim(bot, task["id"])


def _recorded(publisher: Account, task_id: str) -> list[dict[str, object]]:
    attachments: list[dict[str, object]] = ok(publisher.http.get(f"/v1/tasks/{task_id}/claims"))["data"][0][
        "submission"]["attachments"]
    return attachments


def _downloaded(reader: Account | Bot, file_key: str) -> bytes:
    return httpx.get(ok(reader.http.get(f"/v1/files/{file_key}/link"))["downloadUrl"]).content


def test_both_sdk_clients_upload_and_attach(files_server: FileServer, market: Market, tmp_path: Path) -> None:
    publisher, bot, task_id, claim_id = _claimed(market)
    png, pdf = tmp_path / "drawing.png", tmp_path / "report.pdf"
    png.write_bytes(samples.png())
    pdf.write_bytes(samples.pdf())
    sent: list[int] = []
    with Client(files_server.base_url, bot.key, state_path=tmp_path / "state.json") as client:
        image = client.upload(claim_id, png, on_progress=sent.append)

    async def upload_async() -> dict[str, object]:
        async with AsyncClient(files_server.base_url, bot.key, state=StateFile(None)) as aclient:
            return dict(await aclient.upload(claim_id, pdf))

    document = asyncio.run(upload_async())
    assert sum(sent) == png.stat().st_size
    assert (image["mimeType"], document["mimeType"]) == ("image/png", "application/pdf")  # read from the bytes

    with Client(files_server.base_url, bot.key, state_path=tmp_path / "state.json") as client:
        client.submit(claim_id, "image", attachments=[attachment_of(image), attachment_of(document)])
    recorded = _recorded(publisher, task_id)
    assert [(item["type"], item["fileName"]) for item in recorded] == [("image", "drawing.png"),
                                                                       ("document", "report.pdf")]
    reviewer = market.reviewer()
    assert _downloaded(reviewer, image["fileKey"]) == samples.png()
    assert _downloaded(reviewer, str(document["fileKey"])) == samples.pdf()


def test_cli_submit_uploads_each_file(files_server: FileServer, market: Market, tmp_path: Path) -> None:
    publisher, bot, task_id, claim_id = _claimed(market)
    files = {"drawing.png": samples.png(), "voice.wav": samples.wav(), "notes.md": b"# Notes\n\nAll done.\n"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    env = cli_env(files_server.base_url, bot.key, tmp_path)
    args = ["submit", claim_id, "--type", "image", "--json"]
    for name in files:
        args += ["--file", str(tmp_path / name)]
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reviewState"] == "pending"
    recorded = {item["fileName"]: item for item in _recorded(publisher, task_id)}
    assert {name: (item["type"], item["mimeType"]) for name, item in recorded.items()} == {
        "drawing.png": ("image", "image/png"), "voice.wav": ("audio", "audio/wav"),
        "notes.md": ("text", "text/markdown")}
    for name, data in files.items():
        assert _downloaded(bot, str(recorded[name]["fileKey"])) == data


def test_mcp_submit_result_uploads_local_files_over_stdio_only(
        files_server: FileServer, market: Market, tmp_path: Path) -> None:
    publisher, bot, task_id, claim_id = _claimed(market)
    drawing = tmp_path / "drawing.png"
    drawing.write_bytes(samples.png())

    async def work() -> None:
        async with http_client(files_server.base_url, bot.key) as remote:
            refused = problem(await remote.call_tool("submit_result", {
                "claim_id": claim_id, "result_type": "image", "file_paths": [str(drawing)]}))
            assert refused["code"] == "file_paths_need_stdio"
        async with stdio_client(files_server.base_url, bot.key, "--files-root", str(tmp_path)) as local:
            missing = problem(await local.call_tool("submit_result", {
                "claim_id": claim_id, "result_type": "image", "file_paths": [str(tmp_path / "nope.png")]}))
            assert missing["code"] == "file_not_found"
            receipt = answer(await local.call_tool("submit_result", {
                "claim_id": claim_id, "result_type": "image", "file_paths": [str(drawing)]}))
            assert receipt["reviewState"] == "pending"

    asyncio.run(work())
    [item] = _recorded(publisher, task_id)
    assert (item["type"], item["fileName"], item["mimeType"]) == ("image", "drawing.png", "image/png")
    assert _downloaded(bot, str(item["fileKey"])) == samples.png()


def _example(files_server: FileServer, language: str, directory: Path) -> list[str]:
    """The served example, ready to run (the TypeScript one is the client package's, built with it)."""
    source = httpx.get(f"{files_server.base_url}/v1/meta/examples/{language}")
    assert source.status_code == 200
    if language == "python":
        (directory / "agent_loop.py").write_text(source.text)
        return [sys.executable, str(directory / "agent_loop.py")]
    assert source.text == served_example_of_the_package(files_server.base_url)
    return ["node", str(built_example())]


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_the_served_examples_upload_their_attachment(
        files_server: FileServer, market: Market, tmp_path: Path, language: str) -> None:
    publisher = market.publisher(funds=100)
    task = market.task(publisher, "fun", bounty=10, title="Draw and describe")
    bot = market.operator().bot()
    argv = _example(files_server, language, tmp_path)
    (tmp_path / "drawing.png").write_bytes(samples.png())
    env = {name: value for name, value in os.environ.items() if not name.startswith("BOUNTYBOARD_")}
    env.update(BOUNTYBOARD_BASE_URL=files_server.base_url, BOUNTYBOARD_API_KEY=bot.key, BOUNTYBOARD_MODULE="fun",
               BOUNTYBOARD_STATE=str(tmp_path / "state.json"), BOUNTYBOARD_ATTACH=str(tmp_path / "drawing.png"),
               BOUNTYBOARD_POLL_SECONDS="0.2", BOUNTYBOARD_REVIEW_TIMEOUT="0.5")
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 4, run.stdout + run.stderr  # submitted; the review is still pending
    [item] = _recorded(publisher, task["id"])
    assert (item["type"], item["fileName"], item["mimeType"]) == ("image", "drawing.png", "image/png")
    assert _downloaded(bot, str(item["fileKey"])) == samples.png()
