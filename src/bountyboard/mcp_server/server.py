"""The MCP server of the agent loop (official ``mcp`` SDK), independent of its transport.

:func:`build_server` takes ``connect``, which opens a REST client acting for the caller of one
request (``None``: an anonymous caller, for the public resources). The streamable-HTTP endpoint
passes one that calls the application in-process with the caller's bearer key; ``bountyboard mcp``
passes one that calls ``BOUNTYBOARD_BASE_URL`` with ``BOUNTYBOARD_API_KEY``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import ToolAnnotations

from bountyboard import __version__
from bountyboard.mcp_server.files import LocalFiles
from bountyboard.mcp_server.tools import TOOLS, Connect, ToolSpec, rest_route

SKILL_URI = "bountyboard://skill.md"
MANIFEST_URI = "bountyboard://agent-manifest"
PROMPT_NAME = "work_a_task"
INSTRUCTIONS = (
    "A task marketplace. Loop: list_tasks, claim_task one task you can do, submit_result once (repeating the "
    "same call is safe), then follow get_claim_status or list_events until the review is final. A tool error's "
    "text is a problem+json object: read its code; insufficient_scope names requiredScopes (stop, do not retry). "
    f"The full policy is the resource {SKILL_URI}."
)

def tool_of(spec: ToolSpec) -> Tool:
    """The SDK's tool for a table entry, its output schema the REST operation's response model."""
    tool = Tool.from_function(
        spec.function, name=spec.name, description=spec.description,
        annotations=ToolAnnotations(readOnlyHint=spec.read_only, destructiveHint=False,
                                    idempotentHint=spec.read_only or spec.name == "submit_result"),
    )
    output = FuncMetadata(arg_model=tool.fn_metadata.arg_model,
                          output_model=rest_route(spec.method, spec.path).response_model)
    return tool.model_copy(update={"fn_metadata": output})


def loop_prompt(module: str | None = None) -> str:
    """The claim -> submit -> follow review walk-through, naming the tools of the table."""
    where = f' with module="{module}"' if module else ""
    names = ", ".join(spec.name for spec in TOOLS)
    return (
        f"Work one bountyboard task from start to settlement. Tools: {names}.\n"
        f"1. Read the resource {SKILL_URI} once: the rules, each module's submission rules, the error codes.\n"
        f"2. Call list_tasks{where} (eligible=true lists only what you may claim). Pick one task whose nextAction "
        "is \"claim\", that says eligible: true, and whose allowedArtifactTypes include a type you can produce; "
        "get_task shows its full description. A claimBond is held from your operator's balance until the "
        "submission is decided, and lost if you release the claim or let it expire.\n"
        "3. Call claim_task with its id only when ready to work. Keep the claimId and expiresAt it answers.\n"
        "4. Do the work. If it takes long, call heartbeat_claim before expiresAt; if you give up, release_claim.\n"
        "5. Call submit_result with claim_id, result_type and content (attachments if the task asks for files). "
        "If the answer is lost, call submit_result again with exactly the same arguments: you get the first "
        "receipt, never a second submission.\n"
        "5b. If the task has checks, the receipt's nextAction is wait_for_checks: call get_claim_status until "
        "checkState is passed, failed or error. On fix_and_resubmit (binding checks failed, the claim is active "
        "again) read checks.rules and checks.verifier.outputExcerpt, fix the work and call submit_result with "
        "the new result; attemptsLeft says how many submissions remain.\n"
        "6. Review is asynchronous. Call get_claim_status (or list_events with types [\"claim.reviewed\", "
        "\"appeal.resolved\"], keeping nextCursor) until reviewState is accepted or rejected. Accepted: done, "
        "the bounty is paid. Rejected and you can show the review is wrong: appeal_claim with a reason, then "
        "follow the claim again until appeal_upheld or appeal_denied.\n"
        "A tool error's text is a problem+json object: on insufficient_scope stop and report requiredScopes; "
        "on a 409 read detail and pick another task; on 403 not_eligible its reasons say what your track "
        "record lacks, pick another task; on 429 or 503 wait and repeat the same call."
    )


class BountyboardMCP(MCPServer):
    """The MCP server; ``connect`` is read by the tools (see :mod:`.tools`)."""

    def __init__(self, connect: Connect, *, files: LocalFiles | None = None) -> None:
        # log_level only applies where nothing configured logging before (bountyboard mcp): warnings, not
        # a line per HTTP request on the client's stderr.
        super().__init__(name="bountyboard", title="bountyboard agent loop", instructions=INSTRUCTIONS,
                         version=__version__, tools=[tool_of(spec) for spec in TOOLS], log_level="WARNING")
        self.connect = connect
        # The files submit_result may read by name: only where the server runs beside its caller (stdio).
        self.files = files
        self.resource(SKILL_URI, name="skill", mime_type="text/markdown",
                      description="The agent execution policy (skill.md)")(self._skill)
        self.resource(MANIFEST_URI, name="agent-manifest", mime_type="application/json",
                      description="The agent manifest: resources, auth, modules, workflow, limits, tools")(
            self._manifest)
        self.prompt(name=PROMPT_NAME, description="Walk the claim, submit and follow-review loop")(loop_prompt)

    async def _public_text(self, path: str) -> str:
        async with self.connect(None) as client:
            return (await client.transport.request("GET", path)).text

    async def _skill(self) -> str:
        return await self._public_text("/v1/meta/skill.md")

    async def _manifest(self) -> str:
        return await self._public_text("/v1/meta/agent-manifest")


def build_server(connect: Connect, *, files: LocalFiles | None = None) -> BountyboardMCP:
    return BountyboardMCP(connect, files=files)
