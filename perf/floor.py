"""The floor: a bare FastAPI app on uvicorn, run the way ``bountyboard serve`` runs ours.

Every figure under perf/ is a ratio against this app, started by the same script in the same run,
so that a loaded or slow machine moves both sides alike. It answers ``GET /healthz`` (a small JSON
object) and ``POST /echo`` (the request's JSON body, parsed and returned).

    .venv/bin/python -m perf.floor --port 8100      # serve it alone

From a benchmark: ``with Floor() as floor: ... floor.base_url ...``.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

import httpx
from fastapi import FastAPI, Request


def create_app() -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": "floor"}

    @app.post("/echo")
    async def echo(request: Request) -> Any:
        return await request.json()

    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Floor:
    """The floor app in a child process on a free loopback port, for the length of a ``with`` block."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Floor:
        self.process = subprocess.Popen([sys.executable, "-m", "perf.floor", "--port", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError("the floor app did not start")

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)


def chosen_backends(choice: str) -> list[str]:
    """The databases a benchmark's ``--backend`` names (``both`` = SQLite and PostgreSQL), checked reachable."""
    from tests.support.server import postgres_available

    backends = ["sqlite", "postgresql"] if choice == "both" else [choice]
    if "postgresql" in backends and not postgres_available():
        raise SystemExit("PostgreSQL is not reachable (BOUNTYBOARD_TEST_POSTGRES)")
    return backends


def print_against_floor(backends: list[str], measure: Callable[[str, Floor], Iterable[str]]) -> None:
    """Start the floor, print each backend's table rows as they come, then the load average."""
    with Floor() as floor:
        for backend in backends:
            for line in measure(backend, floor):
                print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    # The same server settings as ``bountyboard serve`` (uvicorn's defaults: uvloop, httptools).
    uvicorn.run(create_app(), host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
