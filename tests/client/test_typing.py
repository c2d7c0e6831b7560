"""The SDK as a user's program sees it: typed for their type checker, and loading nothing of the service."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYRIGHT = ROOT / "node_modules" / ".bin" / "pyright"  # installed by scripts/node-deps.sh

# A user's script, outside the package. Each line of `calls` reveals what one method returns, and each line of
# `named` what the same type, written with the SDK's model names, is; one call has a keyword the method does not
# have, which a checker must refuse (mypy under --strict and pyright both fail on an ignore that is not needed).
SCRIPT = """
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

from bountyboard.client import AsyncClient, Client, attachment_of
from bountyboard.client import types as t


def calls(client: Client) -> None:
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
    reveal_type(Client.claim_status)


"""

# What each line of `calls` and `awaited` returns, in the SDK's names.
EXPECTED = [
    "t.ActorContext", "t.Task", "t.TaskPage", "Iterator[t.Task]", "t.ClaimCreated", "t.SubmissionReceipt",
    "t.Upload", "Iterator[tuple[t.Event, str | None]]", "list[t.Bot]", "t.Attachment", "t.ClaimStatus",
    "t.VerifierArchive",
    "Coroutine[Any, Any, t.ClaimCreated]", "t.ClaimCreated", "t.ClaimStatus", "t.EventPage", "AsyncIterator[t.Task]",
    "list[t.Webhook]", "t.SubmissionReceipt", "t.Task",
]
# `Client.claim_status`, read from the class: a function of a client and a claim id. Each checker prints it its way.
UNBOUND = {"mypy": "def (bountyboard.client.methods.Blocking, claim_id: str) -> TypedDict({'id': str, 'taskId'",
           "pyright": "(Blocking, claim_id: str) -> ClaimStatus"}


def _user_script(tmp_path: Path) -> Path:
    parameters = ", ".join(f"a{n}: {kind}" for n, kind in enumerate(EXPECTED))
    reveals = "\n".join(f"    _ = reveal_type(a{n})" for n in range(len(EXPECTED)))
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(SCRIPT) + f"\n\ndef named({parameters}) -> None:\n{reveals}\n")
    return script


def _each_against_its_name(revealed: list[str], checker: str) -> None:
    """The call lines' types, each equal to the type written with the models' names (and the unbound method)."""
    assert len(revealed) == 2 * len(EXPECTED) + 1, revealed
    calls, unbound, named = revealed[:len(EXPECTED)], revealed[len(EXPECTED)], revealed[len(EXPECTED) + 1:]
    for call, name, kind in zip(calls, named, EXPECTED, strict=True):
        assert _comparable(call, checker) == _comparable(name, checker), (kind, call, name)
    assert unbound.startswith(UNBOUND[checker]), unbound


def _comparable(revealed: str, checker: str) -> str:
    """mypy prints a model reached through a method's ParamSpec without its name (``TypedDict({...})``, mypy 2.4),
    and one written by name with it (``TypedDict(bountyboard.client.types.Task, {...})``): compare the structure,
    every key and its type. pyright keeps the names: compare them as printed."""
    return re.sub(r"TypedDict\(bountyboard\.client\.types\.\w+, ", "TypedDict(", revealed) if checker == "mypy" \
        else revealed


def test_mypy_sees_each_methods_parameters_and_result(tmp_path: Path) -> None:
    script = _user_script(tmp_path)
    (tmp_path / "none.ini").write_text("[mypy]\n")  # mypy's defaults, not this repository's
    # Run where the user's script is, with mypy's defaults and no config of this repository.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(tmp_path / "none.ini"), script.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False)
    output = checked.stdout + checked.stderr
    _each_against_its_name(re.findall(r'Revealed type is "(.*)"', output), "mypy")
    # --strict: no call of an untyped function, no module without py.typed, no ignore left unneeded.
    assert checked.returncode == 0, output


def test_pyright_sees_each_methods_parameters_and_result_by_name(tmp_path: Path) -> None:
    script = _user_script(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(
        {"typeCheckingMode": "strict", "reportUnnecessaryTypeIgnoreComment": "error"}))
    checked = subprocess.run([str(PYRIGHT), "--pythonpath", sys.executable, script.name],
                             cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False)
    output = checked.stdout + checked.stderr
    _each_against_its_name(re.findall(r'Type of "[^\n]*" is "(.*)"', output), "pyright")
    assert "0 errors" in output and checked.returncode == 0, output


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
