"""The example clients served under /v1/meta/examples run the whole loop against a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer
from tests.support.typescript import built_example, served_example_of_the_package


@pytest.fixture(scope="package")
def market(loop_server: tuple[LiveServer, Admin]) -> Marketplace:
    return Marketplace(loop_server[1])


@pytest.fixture(scope="module")
def python_example(loop_server: tuple[LiveServer, Admin], tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    answer = httpx.get(loop_server[0].base_url + "/v1/meta/examples/python")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/x-python")
    assert f'"BOUNTYBOARD_BASE_URL", "{loop_server[0].base_url}"' in answer.text  # defaults to where it came from
    script = tmp_path_factory.mktemp("python") / "agent_loop.py"
    script.write_text(answer.text)
    return [sys.executable, str(script)]


@pytest.fixture(scope="module")
def typescript_example(loop_server: tuple[LiveServer, Admin]) -> list[str]:
    answer = httpx.get(loop_server[0].base_url + "/v1/meta/examples/typescript")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/x-typescript")
    # What the package compiles is what is served, but for the default address, which is the server's own.
    assert answer.text == served_example_of_the_package(loop_server[0].base_url)
    assert f'?? "{loop_server[0].base_url}"' in answer.text
    return ["node", str(built_example())]


def _example_env(base_url: str, key: str, state: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("BOUNTYBOARD_")}
    env.update({"BOUNTYBOARD_BASE_URL": base_url, "BOUNTYBOARD_API_KEY": key, "BOUNTYBOARD_STATE": str(state),
                "BOUNTYBOARD_POLL_SECONDS": "0.2", "BOUNTYBOARD_REVIEW_TIMEOUT": "60", "BOUNTYBOARD_MODULE": "fun"})
    return env


def _run_loop(market: Marketplace, argv: list[str], env: dict[str, str]) -> tuple[str, str]:
    """Start an example, play the reviewer once it submitted, and wait for it to see the verdict."""
    task = market.publish("fun")
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        claim = market.wait_for_submission(task["id"])
        assert claim["submission"]["resultType"] == "text"
        market.review(claim["id"], "accept", "Well done.")
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, f"{out}\n{err}"
    assert f"claimed {task['id']} as {claim['id']}" in out
    assert "review final: accepted Well done." in out
    # Exactly one claim and one submission, and the state file is cleaned up after the verdict.
    claims = market.claims_of(task["id"])
    assert [c["id"] for c in claims] == [claim["id"]]
    assert claims[0]["reviewState"] == "accepted"
    return out, err


def test_python_example_completes_the_loop(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                           python_example: list[str], tmp_path: Path) -> None:
    live, _ = loop_server
    state = tmp_path / "state.json"
    _run_loop(market, python_example, _example_env(live.base_url, market.bot.key, state))
    assert not state.exists()


def test_typescript_example_completes_the_loop(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                               typescript_example: list[str], tmp_path: Path) -> None:
    live, _ = loop_server
    _run_loop(market, typescript_example, _example_env(live.base_url, market.bot.key, tmp_path / "state.json"))


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_examples_fail_closed_without_a_scope(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                              request: pytest.FixtureRequest, tmp_path: Path, language: str) -> None:
    live, _ = loop_server
    argv = request.getfixturevalue(f"{language}_example")
    task = market.publish("fun")
    reader = market.operator.bot(scopes=["tasks:read", "claims:read"])
    try:
        result = subprocess.run(argv, env=_example_env(live.base_url, reader.key, tmp_path / "s.json"),
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 3, result.stdout + result.stderr
        assert "tasks:claim" in result.stderr and "claims:submit" in result.stderr
        assert market.claims_of(task["id"]) == []
    finally:
        market.publisher.http.post(f"/v1/tasks/{task['id']}/cancel")


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_examples_resume_a_persisted_claim(loop_server: tuple[LiveServer, Admin], market: Marketplace,
                                           request: pytest.FixtureRequest, tmp_path: Path, language: str) -> None:
    """A state file left by a crash after the claim: the example resumes that claim, claims nothing new."""
    live, _ = loop_server
    argv = request.getfixturevalue(f"{language}_example")
    task = market.publish("fun")
    claimed = market.bot.http.post(f"/v1/agent/tasks/{task['id']}/claim").json()
    state = tmp_path / "state.json"
    listed = market.bot.http.get(f"/v1/agent/tasks/{task['id']}").json()
    state.write_text(json.dumps({"task": listed, "claimKey": "k1", "claimId": claimed["claimId"]}))
    process = subprocess.Popen(argv, env=_example_env(live.base_url, market.bot.key, state),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        claim = market.wait_for_submission(task["id"])
        market.review(claim["id"], "reject", "Too short.")
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, out + err
    assert claim["id"] == claimed["claimId"]
    assert "claimed" not in out  # no second claim
    assert "review final: rejected Too short." in out
    assert len(market.claims_of(task["id"])) == 1
