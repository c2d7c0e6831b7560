"""The chat-model agent against a loopback OpenAI-compatible server, and harbor missing.

No model API is reachable here, so the test serves ``POST /v1/chat/completions`` itself on
loopback: it solves the sums it is asked, insists on the bearer key, reports token usage and
answers its first call with 429 + Retry-After, which the agent must wait out and retry.
The hand-off of a Harbor reference to the real harbor is in test_harbor_real.py.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bountyboard.runner.harbor import JobResult, read_job_dir
from tests.runner.conftest import Registry, bench, read_json

MODEL_KEY = "sk-loopback-test"


class ChatServer(ThreadingHTTPServer):
    calls: list[dict[str, Any]]
    throttled: bool


class _ChatHandler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.calls.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.path != "/v1/chat/completions":
            return self._answer(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != f"Bearer {MODEL_KEY}":
            return self._answer(401, {"error": {"message": "bad key"}})
        if not self.server.throttled:
            self.server.throttled = True
            return self._answer(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        question = body["messages"][-1]["content"]
        a, b = map(int, re.findall(r"\d+", question)[:2])
        self._answer(200, {"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": f"{a + b}"}}],
                           "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42}})


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer(("127.0.0.1", 0), _ChatHandler)
    server.calls, server.throttled = [], False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_model_agent_end_to_end(registry: Registry, workdir: Path, chat_server: ChatServer,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    assert bench("pull", "gsm8k", "--n", "3", "--registry", str(registry.index)).exit_code == 0
    base_url = f"http://127.0.0.1:{chat_server.server_address[1]}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    result = bench("run", "gsm8k", "-a", "openai", "-m", "loopback/adder-1", "--base-url", base_url,
                   "--job-name", "model", "-n", "1")
    assert result.exit_code == 0, result.output
    job = read_job_dir(Path("jobs/model"))
    assert job.result is not None
    (stats,) = job.result.stats.evals.values()
    assert stats.metrics == [{"mean": 1.0}] and stats.n_errors == 0
    assert job.result.stats.n_input_tokens == 120 and job.result.stats.n_output_tokens == 6
    assert list(job.result.stats.evals) == ["openai__adder-1__gsm8k"]
    # Three answered calls plus the throttled one, each with the model and the instruction.
    assert len(chat_server.calls) == 4
    assert {call["body"]["model"] for call in chat_server.calls} == {"loopback/adder-1"}
    assert all("What is" in call["body"]["messages"][-1]["content"] for call in chat_server.calls)
    for trial in job.finished:
        assert trial.agent_info.model_info is not None
        assert (trial.agent_info.model_info.provider, trial.agent_info.model_info.name) == ("loopback", "adder-1")
    pushed = bench("push", "jobs/model", "--dry-run")
    (payload,) = json.loads(pushed.stdout)
    assert payload["model"] == "loopback/adder-1"
    assert {json.dumps(trial["tokens"]) for trial in payload["trials"]} == {'{"input": 40, "output": 2}'}


def test_model_agent_with_a_refused_key_records_errors(registry: Registry, workdir: Path, chat_server: ChatServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert bench("pull", "gsm8k", "--n", "2", "--registry", str(registry.index)).exit_code == 0
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    base_url = f"http://127.0.0.1:{chat_server.server_address[1]}/v1"
    result = bench("run", "gsm8k", "-a", "openai", "-m", "m", "--base-url", base_url, "--job-name", "refused")
    assert result.exit_code == 0, result.output
    stats = JobResult.model_validate(read_json(Path("jobs/refused/result.json"))).stats
    assert stats.n_errored_trials == 2
    assert list(next(iter(stats.evals.values())).exception_stats) == ["AgentAuthenticationError"]


def test_model_agent_needs_a_base_url(registry: Registry, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert bench("pull", "gsm8k", "--n", "1", "--registry", str(registry.index)).exit_code == 0
    result = bench("run", "gsm8k", "-a", "openai", "-m", "m")
    assert result.exit_code == 2
    assert "--base-url" in result.output


def test_a_harbor_reference_without_harbor_says_how_to_install_it(workdir: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = bench("run", "terminal-bench@2.0", "--benchmark", "terminal-bench", "-a", "oracle", "-m", "x/y")
    assert result.exit_code == 4
    text = " ".join(result.output.split())
    assert "Python >= 3.12" in text and "Docker" in text and "uv tool install harbor" in text
    refs = bench("run", "org/name@1.0", "-a", "oracle")
    assert refs.exit_code == 2 and "--benchmark" in refs.output
