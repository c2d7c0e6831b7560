"""The SDK as a user's program sees it: typed for their type checker, and loading nothing of the service."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A user's script, outside the package: each line reveals what one method returns, but one: a call with a
# keyword the method does not have, which the checker must refuse (under --strict, an ignore not needed fails).
SCRIPT = '''
from bountyboard.client import AsyncClient, Client, attachment_of


def sync(client: Client) -> None:
    reveal_type(client.me())
    reveal_type(client.get_task("task_x"))
    reveal_type(client.list_tasks(status="published"))
    reveal_type(client.iter_tasks(status="published"))
    reveal_type(client.claim("task_x"))
    reveal_type(client.submit("clm_x", "text", "done"))
    reveal_type(client.upload("clm_x", "notes.txt"))
    reveal_type(client.iter_events(follow=True))
    reveal_type(client.bots())
    reveal_type(attachment_of(client.upload("clm_x", "notes.txt")))
    reveal_type(client.claim_status(claim_id="clm_x"))
    reveal_type(client.upload_verifier_archive("task_x", "tests"))
    client.claim_status(claim="clm_x")  # type: ignore[call-arg]


async def awaited(client: AsyncClient) -> None:
    claiming = reveal_type(client.claim("task_x"))
    reveal_type(await claiming)
    reveal_type(await client.claim_status("clm_x"))
    reveal_type(await client.events())
    reveal_type(client.iter_tasks())
    reveal_type(await client.webhooks())
    reveal_type(await client.submit(claim_id="clm_x", result_type="text", idempotency_key="retry-1"))
    reveal_type(await client.publish_task("fun", "t", checks={"binding": True}, verifier_tests="tests"))
'''


def _model(name: str) -> str:
    return f"TypedDict(bountyboard.client.types.{name},"


def _plain(revealed: str) -> str:
    """The revealed type as recent mypy versions print it (older ones quote names and say ``builtins.``)."""
    return revealed.replace("'", "").replace("builtins.", "")


EXPECTED = [
    _model("ActorContext"), _model("Task"), _model("TaskPage"), f"typing.Iterator[{_model('Task')}",
    _model("ClaimCreated"), _model("SubmissionReceipt"), _model("Upload"),
    f"typing.Iterator[tuple[{_model('Event')}", f"list[{_model('Bot')}", _model("Attachment"), _model("ClaimStatus"),
    _model("VerifierArchive"),
    f"typing.Coroutine[Any, Any, {_model('ClaimCreated')}", _model("ClaimCreated"), _model("ClaimStatus"),
    _model("EventPage"), f"typing.AsyncIterator[{_model('Task')}", f"list[{_model('Webhook')}",
    _model("SubmissionReceipt"), _model("Task"),
]


def test_a_users_type_checker_sees_the_sdks_models(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "none.ini").write_text("[mypy]\n")  # mypy's defaults, not this repository's
    # Run where the user's script is, with mypy's defaults and no config of this repository.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(tmp_path / "none.ini"), script.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False)
    output = checked.stdout + checked.stderr
    revealed = re.findall(r'Revealed type is "(.*)"', output)
    assert len(revealed) == len(EXPECTED), output
    for shown, expected in zip(revealed, EXPECTED, strict=True):
        assert _plain(shown).startswith(expected), (shown, expected)
    # --strict: no call of an untyped function, no module without py.typed.
    assert checked.returncode == 0, output


def test_the_package_ships_its_py_typed_marker() -> None:
    assert resources.files("bountyboard").joinpath("py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["bountyboard"]


def test_importing_the_sdk_loads_nothing_of_the_service() -> None:
    probe = textwrap.dedent('''
        import sys
        import bountyboard.client
        loaded = sorted(name for name in sys.modules if name.split(".")[0] in {"fastapi", "starlette", "sqlalchemy",
                        "alembic", "jinja2", "jsonschema"}
                        or name.startswith("bountyboard.") and name.split(".")[1] not in {"client", "contract"})
        print(",".join(loaded))
    ''')
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == ""
