"""``bench run -a NAME``: the registry builds each agent from the command line, or says what is missing."""

from __future__ import annotations

import re

import pytest

from bountyboard.runner.agents import AGENTS, AgentSpec, ChatModelAgent, CommandAgent, NopAgent, OracleAgent


def test_every_registered_name_builds_its_agent() -> None:
    specs = {"oracle": AgentSpec("oracle"), "nop": AgentSpec("nop"), "command": AgentSpec("command", command="cat"),
             "openai": AgentSpec("openai", model="m", base_url="http://127.0.0.1:9")}
    assert set(specs) == set(AGENTS)
    built = {name: spec.create() for name, spec in specs.items()}
    assert [type(agent) for agent in built.values()] == [OracleAgent, NopAgent, CommandAgent, ChatModelAgent]
    assert all(agent.name == name for name, agent in built.items())
    assert isinstance(built["command"], CommandAgent) and built["command"].command == "cat"


@pytest.mark.parametrize(("spec", "message"), [
    (AgentSpec("claude"), "unknown agent 'claude'; agents are oracle, nop, command, openai"),
    (AgentSpec("command"), "the command agent needs --command"),
    (AgentSpec("openai", model="m"), "the openai agent needs --base-url (or OPENAI_BASE_URL) and -m MODEL"),
    (AgentSpec("openai", base_url="http://127.0.0.1:9"), "needs --base-url"),
])
def test_a_spec_missing_what_its_agent_needs_is_refused(spec: AgentSpec, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        spec.validate()
