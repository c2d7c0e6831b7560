"""One table of tools drives both transports, the manifest and skill.md: a new tool cannot be missing."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from mcp import Client

from bountyboard.app import create_app
from bountyboard.mcp_server import tools
from bountyboard.mcp_server.server import build_server
from bountyboard.meta.manifest import build_manifest
from bountyboard.meta.skill import render_skill

pytestmark = pytest.mark.in_process


def _served(monkeypatch: pytest.MonkeyPatch | None = None) -> dict[str, dict[str, object]]:
    async def listed() -> dict[str, dict[str, object]]:
        async with Client(build_server(connect=None)) as client:  # type: ignore[arg-type]
            return {tool.name: tool.output_schema or {} for tool in (await client.list_tools()).tools}

    return asyncio.run(listed())


def test_every_tool_is_served_with_its_rest_answer_as_output_schema() -> None:
    served = _served()
    assert list(served) == [spec.name for spec in tools.TOOLS]
    for spec in tools.TOOLS:
        model = tools.rest_route(spec.method, spec.path).response_model
        assert served[spec.name]["title"] == model.model_json_schema()["title"], spec.name


def test_a_tool_added_to_the_table_appears_in_both_transports_the_manifest_and_skill_md(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def read_task_again(ctx: tools.Context, task_id: tools.TaskId) -> tools.CallToolResult:
        return await tools.get_task(ctx, task_id)

    extra = dataclasses.replace(tools.TOOLS[1], function=read_task_again, description="Read a task, again.")
    monkeypatch.setattr(tools, "TOOLS", (*tools.TOOLS, extra))
    monkeypatch.setattr("bountyboard.mcp_server.server.TOOLS", tools.TOOLS)
    monkeypatch.setattr("bountyboard.meta.manifest.TOOLS", tools.TOOLS)
    assert "read_task_again" in _served()  # the one server both transports run
    manifest = build_manifest(create_app())
    assert "read_task_again" in [tool.name for tool in manifest.mcp.tools]
    assert "| `read_task_again` | `GET /v1/agent/tasks/{id}` | `tasks:read` | Read a task, again. |" in render_skill(
        manifest)
