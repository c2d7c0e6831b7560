"""``make run PORT=...``: the service listens there, and every URL it advertises names that port."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.support.server import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_make_run_on_another_port_advertises_that_port(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {name: value for name, value in os.environ.items() if not name.startswith("BOUNTYBOARD_")}
    env.update(BOUNTYBOARD_DATA_DIR=str(tmp_path), BOUNTYBOARD_LOG_LEVEL="WARNING",
               BOUNTYBOARD_ADMIN_EMAIL="admin@example.com", BOUNTYBOARD_ADMIN_PASSWORD="admin-password-for-tests")
    # -o: the virtualenv is installed already; run the recipe itself.
    process = subprocess.Popen(["make", "-s", "-o", ".venv/.runtime", "run", f"PORT={port}"], cwd=REPO_ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.3)
        manifest = httpx.get(f"{base}/v1/meta/agent-manifest", timeout=30).json()
        assert manifest["baseUrl"] == base and manifest["siteUrl"] == base
        assert manifest["mcp"]["endpoint"] == f"{base}/mcp"
        assert manifest["resources"]["skill"] == f"{base}/v1/meta/skill.md"
        assert all(op["url"].startswith(base) for op in manifest["operations"])
        openapi = httpx.get(f"{base}/v1/meta/openapi.json", timeout=30).json()
        assert openapi["servers"] == [{"url": base}]
        for path in ("/v1/meta/skill.md", "/v1/meta/examples/python", "/v1/meta/examples/typescript",
                     "/v1/meta/postman.json", "/"):
            page = httpx.get(base + path, timeout=30).text
            assert ":8000" not in page, path
        assert base in httpx.get(f"{base}/v1/meta/skill.md", timeout=30).text
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
