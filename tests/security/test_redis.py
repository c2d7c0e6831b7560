"""Redis on a runtime-only install, shared by two replicas, and watched by /readyz.

The runtime install is a fresh virtual environment with ``pip install <repo>`` and no dev extra
(built once per session), as ``make run`` or a production image has it. Two replicas of it on one
PostgreSQL database share their counters in Redis: the limits hold across both, and nothing answers
500. /readyz says "not ready" while Redis does not answer, and "ready" again when it is back.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.benchhub.helpers import payload
from tests.security.conftest import PASSWORD, log_in, new_user, private_server, site_client
from tests.security.tcp_forwarder import TcpForwarder
from tests.support.api import Admin, expect_problem
from tests.support.server import LiveServer, backends, database_url

REPO_ROOT = Path(__file__).resolve().parents[2]
REDIS = ("127.0.0.1", 6379)
REDIS_URL = "redis://127.0.0.1:6379/0"
LIMIT = 4
# Building the runtime install downloads and installs every runtime dependency: minutes, once a session.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="session")
def runtime_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of a fresh venv holding ``pip install <repo>`` without the dev extra."""
    root = tmp_path_factory.mktemp("runtime-install")
    source = root / "source"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "node_modules", "build", "dist", "*.egg-info", "__pycache__", "tests", "perf",
        ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "test-artifacts", "jobs"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(source)], check=True, timeout=1800)
    installed = subprocess.run([python, "-c", "import importlib.util as u; print(u.find_spec('pytest') is None)"],
                               capture_output=True, text=True, check=True)
    assert installed.stdout.strip() == "True", "the dev extra leaked into the runtime install"
    return python


@pytest.fixture(scope="module", params=[backend for backend in backends() if backend == "postgresql"])
def replicas(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             runtime_python: str) -> Iterator[list[LiveServer]]:
    data_dir = tmp_path_factory.mktemp("replicas")
    prefix = f"bb-test-{uuid.uuid4().hex}"
    shared = {"BOUNTYBOARD_REDIS_URL": REDIS_URL, "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": prefix,
              "BOUNTYBOARD_SECRET_KEY": "shared-secret-" + uuid.uuid4().hex,
              "BOUNTYBOARD_RUNS_PER_IP_PER_DAY": str(LIMIT), "BOUNTYBOARD_KEY_RATE_LIMIT": str(LIMIT)}
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(database_url(request.param, data_dir))
        yield [stack.enter_context(LiveServer(data_dir / name, url, env=shared, python=runtime_python))
               for name in ("a", "b")]
    counters = redis.Redis.from_url(REDIS_URL)
    for key in counters.scan_iter(f"{prefix}*"):
        counters.delete(key)


def test_two_runtime_replicas_share_their_limits_in_redis(replicas: list[LiveServer]) -> None:
    answers: list[httpx.Response] = []
    for live in replicas:
        ready = httpx.get(live.base_url + "/readyz", timeout=30)
        assert ready.status_code == 200, ready.text

    # Anonymous uploads per address, alternating between the replicas.
    uploads = [httpx.post(replicas[number % 2].base_url + "/v1/runs", json=payload(rewards=[1.0]), timeout=60)
               for number in range(LIMIT + 2)]
    answers += uploads
    assert [answer.status_code for answer in uploads] == [200] * LIMIT + [429, 429]

    # The general limit of one key, alternating between the replicas.
    admin = Admin.of(replicas[0])
    key = admin.account().key
    calls = [httpx.get(replicas[number % 2].base_url + "/v1/agent/tasks", timeout=60,
                       headers={"Authorization": f"Bearer {key}"}) for number in range(LIMIT + 2)]
    answers += calls
    assert [answer.status_code for answer in calls] == [200] * LIMIT + [429, 429]

    # The site's log-in and sign-up, rate limited too.
    email = new_user(Admin(replicas[1].base_url, admin.key))
    for live in replicas:
        answers.append(log_in(site_client(live.base_url), email, PASSWORD))
        assert answers[-1].status_code == 303, answers[-1].text[:300]
    assert not [answer for answer in answers if answer.status_code >= 500]


@pytest.fixture(params=backends())
def behind_forwarder(request: pytest.FixtureRequest,
                     tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, TcpForwarder]]:
    with TcpForwarder(REDIS) as forwarder, private_server(
            request.param, tmp_path_factory.mktemp(f"readyz-{request.param}"),
            {"BOUNTYBOARD_REDIS_URL": f"redis://127.0.0.1:{forwarder.port}/0",
             "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": f"bb-test-{uuid.uuid4().hex}"}) as live:
        yield live, forwarder


def wait_for_readiness(live: LiveServer, status: int) -> httpx.Response:
    deadline = time.monotonic() + 30
    while True:
        answer = httpx.get(live.base_url + "/readyz", timeout=30)
        if answer.status_code == status or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def test_readyz_is_not_ready_while_redis_does_not_answer(behind_forwarder: tuple[LiveServer, TcpForwarder]) -> None:
    live, forwarder = behind_forwarder
    assert httpx.get(live.base_url + "/readyz", timeout=30).status_code == 200
    forwarder.cut()
    expect_problem(wait_for_readiness(live, 503), 503, "redis_unreachable")
    assert httpx.get(live.base_url + "/healthz", timeout=30).status_code == 200, "alive, only not ready"
    forwarder.restore()
    assert wait_for_readiness(live, 200).status_code == 200
