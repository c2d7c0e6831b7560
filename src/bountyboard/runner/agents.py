"""Agents that ``bench run`` drives locally, without Docker, and the registry (name -> class) that makes them.

- ``oracle`` runs the task's ``solution/solve.sh`` (the reference answer), as Harbor's oracle does;
- ``nop`` answers nothing;
- ``command`` runs a shell command with the instruction on stdin and takes stdout as the answer;
- ``openai`` asks an OpenAI-compatible chat-completions endpoint (``--base-url``; the key comes
  from ``OPENAI_API_KEY`` or the variable named by ``--api-key-env``).

An agent returns an :class:`AgentOutput`; it raises :class:`AgentError` when it failed, which the
trial records as its exception (Harbor's ``exception_info``).
"""

from __future__ import annotations

import asyncio
import os
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Self

import httpx

from bountyboard import __version__
from bountyboard.client.exceptions import BountyboardError

SYSTEM_PROMPT = ("You are solving one benchmark task. Reply with only the final answer, "
                 "with no explanation and no formatting.")


class AgentError(BountyboardError):
    """An agent failed; ``kind`` becomes the trial's exception type."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class AgentOutput:
    answer: str | None
    n_input_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass
class TaskInput:
    """What an agent sees of one trial."""

    task_dir: Path
    instruction: str
    agent_dir: Path
    timeout_sec: float


class Agent(Protocol):
    name: str
    version: str

    async def run(self, task: TaskInput) -> AgentOutput: ...

    async def close(self) -> None: ...


class BuiltInAgent(ABC):
    """What the registered agents share: built from the command line's :class:`AgentSpec`, which they check
    for what they need, and nothing to release unless they say so."""

    name: str
    version: str

    @abstractmethod
    async def run(self, task: TaskInput) -> AgentOutput: ...

    @classmethod
    def from_spec(cls, spec: AgentSpec) -> Self:
        return cls()

    async def close(self) -> None:
        return None


async def _run_process(args: str | list[str], *, stdin: str | None, time_limit: float,
                       env: dict[str, str] | None = None) -> tuple[int, str, str]:
    kwargs = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE,
              "stderr": asyncio.subprocess.PIPE, "env": env}
    if isinstance(args, str):
        process = await asyncio.create_subprocess_shell(args, **kwargs)  # type: ignore[arg-type]
    else:
        process = await asyncio.create_subprocess_exec(*args, **kwargs)  # type: ignore[arg-type]
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin.encode() if stdin is not None else None),
                                          time_limit)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AgentError("AgentTimeoutError", f"the agent did not finish within {time_limit:g} s") from None
    return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


@dataclass
class OracleAgent(BuiltInAgent):
    name: str = "oracle"
    version: str = "1.0.0"

    async def run(self, task: TaskInput) -> AgentOutput:
        script = task.task_dir / "solution" / "solve.sh"
        if not script.is_file():
            raise AgentError("FileNotFoundError", f"{script} does not exist; the task has no reference solution")
        answer_file = task.agent_dir / "answer.txt"
        code, out, err = await _run_process(["bash", str(script)], stdin=None, time_limit=task.timeout_sec,
                                            env={**os.environ, "ANSWER_FILE": str(answer_file)})
        (task.agent_dir / "oracle.txt").write_text(out + err)
        if code != 0:
            raise AgentError("NonZeroAgentExitCodeError", f"solve.sh exited with {code}: {err.strip()[:500]}")
        return AgentOutput(answer=answer_file.read_text() if answer_file.is_file() else None)


@dataclass
class NopAgent(BuiltInAgent):
    name: str = "nop"
    version: str = "1.0.0"

    async def run(self, task: TaskInput) -> AgentOutput:
        return AgentOutput(answer=None)


@dataclass
class CommandAgent(BuiltInAgent):
    command: str
    name: str = "command"
    version: str = __version__

    @classmethod
    def from_spec(cls, spec: AgentSpec) -> Self:
        if not spec.command:
            raise ValueError("the command agent needs --command")
        return cls(spec.command)

    async def run(self, task: TaskInput) -> AgentOutput:
        env = {**os.environ, "TASK_DIR": str(task.task_dir)}
        code, out, err = await _run_process(self.command, stdin=task.instruction, time_limit=task.timeout_sec,
                                            env=env)
        (task.agent_dir / "command.txt").write_text(f"$ {self.command}\n[exit {code}]\n--- stderr\n{err}")
        if code != 0:
            raise AgentError("NonZeroAgentExitCodeError", f"the command exited with {code}: {err.strip()[:500]}")
        return AgentOutput(answer=out)


@dataclass
class ChatModelAgent(BuiltInAgent):
    """One chat completion per trial; the reply's text is the answer."""

    base_url: str
    model: str
    api_key: str | None
    max_retries: int = 4
    name: str = "openai"
    version: str = __version__
    _client: httpx.AsyncClient | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_spec(cls, spec: AgentSpec) -> Self:
        if not (spec.base_url and spec.model):
            raise ValueError("the openai agent needs --base-url (or OPENAI_BASE_URL) and -m MODEL")
        return cls(spec.base_url, spec.model, os.environ.get(spec.api_key_env))

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._client = httpx.AsyncClient(base_url=self.base_url.rstrip("/"), headers=headers, timeout=600)
        return self._client

    async def _complete(self, body: dict[str, object], time_limit: float) -> httpx.Response:
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http().post("/chat/completions", json=body, timeout=time_limit)
            except httpx.TransportError as exc:
                if attempt == self.max_retries:
                    raise AgentError("ConnectionError", f"cannot reach {self.base_url}: {exc}") from exc
                await asyncio.sleep(random.uniform(0, 0.5 * 2 ** attempt))
                continue
            if (response.status_code == 429 or response.status_code >= 500) and attempt < self.max_retries:
                retry_after = response.headers.get("retry-after", "")
                delay = float(retry_after) if retry_after.replace(".", "", 1).isdigit() else 0.5 * 2 ** attempt
                await asyncio.sleep(min(delay, 60.0))
                continue
            return response
        raise AssertionError("unreachable")

    async def run(self, task: TaskInput) -> AgentOutput:
        body: dict[str, object] = {"model": self.model, "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task.instruction},
        ]}
        response = await self._complete(body, task.timeout_sec)
        (task.agent_dir / "response.json").write_text(response.text)
        if response.status_code in (401, 403):
            raise AgentError("AgentAuthenticationError", f"the model API refused the key: {response.text[:300]}")
        if response.status_code >= 400:
            raise AgentError("ModelApiError", f"the model API answered {response.status_code}: {response.text[:300]}")
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise AgentError("ModelApiError", f"unexpected chat-completions answer: {response.text[:300]}") from exc
        usage = data.get("usage") or {}
        return AgentOutput(answer=str(content), n_input_tokens=usage.get("prompt_tokens"),
                           n_output_tokens=usage.get("completion_tokens"))

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


# The agents ``bench run -a NAME`` knows, as Harbor's AgentFactory maps names to classes.
AGENTS: dict[str, type[BuiltInAgent]] = {"oracle": OracleAgent, "nop": NopAgent, "command": CommandAgent,
                                         "openai": ChatModelAgent}


@dataclass(frozen=True)
class AgentSpec:
    """What the command line asked for; :meth:`create` builds the agent the registry names."""

    name: str
    model: str | None = None
    command: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"

    def validate(self) -> None:
        """:class:`ValueError` naming what is unknown or missing (building an agent opens nothing)."""
        self.create()

    def create(self) -> Agent:
        """The agent, or :class:`ValueError` naming what is unknown or missing."""
        if self.name not in AGENTS:
            raise ValueError(f"unknown agent {self.name!r}; agents are {', '.join(AGENTS)}")
        return AGENTS[self.name].from_spec(self)
