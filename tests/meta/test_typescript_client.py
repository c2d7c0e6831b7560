"""The TypeScript client package (clients/typescript) against the session's live server.

Its generated types are what openapi-typescript makes of the served OpenAPI document, and every
TypeScript version it declares compiles it, with and without @types/node, into Node tests that run
the agent loop (claim, upload, submit, review) and verify a signed webhook delivery.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.client.loop import WORKER_SCOPES, Marketplace
from tests.support.api import Admin, Bot
from tests.support.server import LiveServer
from tests.support.typescript import NODE_MODULES, PACKAGE, Build, compile_package, declared_builds, declared_versions

SCHEMA = PACKAGE / "src" / "schema.ts"


@pytest.fixture(scope="session")
def typescript_builds() -> dict[str, Build]:
    """Every declared build, compiled once per session, two at a time."""
    builds = declared_builds()
    with ThreadPoolExecutor(max_workers=2) as pool:
        files = dict(zip(builds, pool.map(compile_package, builds), strict=True))
    for build, read in files.items():
        node_types = [name for name in read if "/node_modules/@types/node/" in name]
        if build.config == "node-types":
            assert node_types, f"{build.name} did not read @types/node"
        else:
            assert not node_types, f"{build.name} read @types/node: {node_types[:3]}"
    return {build.name: build for build in builds}


@pytest.fixture(scope="module")
def market(admin: Admin) -> Marketplace:
    return Marketplace(admin)


@pytest.fixture(scope="module")
def worker(market: Marketplace) -> Bot:
    return market.operator.bot(scopes=[*WORKER_SCOPES, "webhooks:manage"])


def test_declared_versions_are_documented() -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    for version in declared_versions().values():
        assert f"TypeScript {version}" in readme


def test_generated_types_are_those_of_the_served_document(server: LiveServer, tmp_path: Path) -> None:
    generated = tmp_path / "schema.ts"
    result = subprocess.run(
        [str(NODE_MODULES / ".bin" / "openapi-typescript"), server.base_url + "/v1/meta/openapi.json",
         "-o", str(generated)], capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert generated.read_text(encoding="utf-8") == SCHEMA.read_text(encoding="utf-8"), (
        "clients/typescript/src/schema.ts is not what the served document generates: with a server running, "
        "run `npm run generate` in clients/typescript and commit the result")


@pytest.mark.parametrize("build_name", [build.name for build in declared_builds()])
def test_package_runs_the_loop_and_verifies_a_webhook(server: LiveServer, market: Marketplace, worker: Bot,
                                                      typescript_builds: dict[str, Build], build_name: str) -> None:
    build = typescript_builds[build_name]
    task = market.publish("fun")
    env = {name: value for name, value in os.environ.items() if not name.startswith("BOUNTYBOARD_")}
    env.update({"BOUNTYBOARD_BASE_URL": server.base_url, "BOUNTYBOARD_API_KEY": worker.key,
                "BOUNTYBOARD_TASK_ID": task["id"]})
    process = subprocess.Popen(["node", "--test", str(build.out_dir / "test")], cwd=PACKAGE, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Play the reviewer once the submission is in; stop waiting if the tests end without one.
        deadline = time.monotonic() + 60
        while not (submitted := [c for c in market.claims_of(task["id"]) if c["submission"] is not None]):
            assert process.poll() is None and time.monotonic() < deadline, "no submission arrived"
            time.sleep(0.2)
        market.review(submitted[0]["id"], "accept", "Fine pixel.")
        out, err = process.communicate(timeout=60)
    except AssertionError as failure:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"{build_name}: {failure}\n{out}\n{err}") from None
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, f"{build_name}:\n{out}\n{err}"
    assert "# fail 0" in out and "# pass 4" in out, out
    claim = market.claims_of(task["id"])[0]
    assert claim["reviewState"] == "accepted"
    assert [a["fileName"] for a in claim["submission"]["attachments"]] == ["pixel.png"]
