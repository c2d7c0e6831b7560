"""Redis on a runtime-only install, shared by two replicas, and watched by /readyz.

The runtime install is a fresh virtual environment with ``pip install <repo>`` and no dev extra
(built once per session), as ``make run`` or a production image has it. Two replicas of it on one
PostgreSQL database share their counters in Redis: the limits hold across both, and nothing answers
500. /readyz says "not ready" while Redis does not answer, and "ready" again when it is back. While Redis
is cut or hangs, every answer comes promptly and follows the outage policy (docs/security.md), never 500.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.benchhub.helpers import payload
from tests.security.conftest import PASSWORD, log_in, new_user, private_server, site_client, site_form
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


OUTAGE_SECONDS = 5
# How fast an answer must come while Redis hangs: the client's timeouts (BOUNTYBOARD_REDIS_TIMEOUT_SECONDS,
# 1 s by default) and a loaded machine's slack, far under the test client's own 30 s.
PROMPT_SECONDS = 6


@pytest.fixture(params=[(backend, outage) for backend in backends() for outage in ("cut", "stall")], ids="-".join)
def outage(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, TcpForwarder, str]]:
    backend, kind = request.param
    with TcpForwarder(REDIS) as forwarder, private_server(
            backend, tmp_path_factory.mktemp(f"outage-{backend}-{kind}"),
            {"BOUNTYBOARD_REDIS_URL": f"redis://127.0.0.1:{forwarder.port}/0", "BOUNTYBOARD_RUN_DISPATCHER": "false",
             "BOUNTYBOARD_RATELIMIT_KEY_PREFIX": f"bb-test-{uuid.uuid4().hex}"}) as live:
        yield live, forwarder, kind


def sign_up(live: LiveServer) -> httpx.Response:
    fields = {"email": f"new-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD, "password_again": PASSWORD}
    return site_form(site_client(live.base_url), "/signup", fields)


def test_a_redis_outage_is_answered_by_the_outage_policy_never_500(
        outage: tuple[LiveServer, TcpForwarder, str]) -> None:
    """Per-key and per-user limits fail open (uncounted, counted in /readyz); per-address limits (log-in,
    sign-up, anonymous uploads) refuse with 503 and Retry-After; the site's pages keep answering."""
    live, forwarder, kind = outage
    admin = Admin.of(live)
    agent, publisher = admin.account("operator"), admin.account("publisher")
    email = new_user(admin)
    site = site_client(live.base_url)  # only reads pages: one visitor for them all
    upload = payload(rewards=[1.0])
    # Each request of the round, and what it must get while Redis is away: 200 for the keyed ones (failing
    # open), 503 for the ones only an address limits (the site's as a page, the API's as a problem).
    requests: list[tuple[str, Callable[[], httpx.Response], int]] = [
        ("agent tasks", lambda: agent.http.get("/v1/agent/tasks"), 200),
        ("agent claims", lambda: agent.http.get("/v1/agent/claims"), 200),
        ("publisher tasks", lambda: publisher.http.get("/v1/tasks"), 200),
        ("keyed upload", lambda: agent.http.post("/v1/runs", json=upload), 200),
        ("site home", lambda: site.get("/"), 200),
        ("site log-in", lambda: log_in(site_client(live.base_url), email, PASSWORD), 503),
        ("site sign-up", lambda: sign_up(live), 503),
        ("anonymous upload", lambda: httpx.post(live.base_url + "/v1/runs", json=upload, timeout=30), 503),
    ]
    for name, call, _ in requests:
        assert call().status_code in (200, 303), name  # with Redis answering, each request is fine

    forwarder.stall() if kind == "stall" else forwarder.cut()
    seen: dict[str, list[int]] = {name: [] for name, _, _ in requests}
    failed_open = refused = 0
    deadline = time.monotonic() + OUTAGE_SECONDS
    while time.monotonic() < deadline:
        for name, call, expected in requests:
            started = time.monotonic()
            answer = call()
            assert time.monotonic() - started < PROMPT_SECONDS, f"{name} hung {time.monotonic() - started:.1f} s"
            seen[name].append(answer.status_code)
            assert answer.status_code == expected, f"{name}: {answer.status_code} {answer.text[:300]}"
            if expected == 503:
                assert int(answer.headers["retry-after"]) > 0, name
                refused += 1
            elif name != "site home":
                failed_open += 1
            if name == "anonymous upload":
                expect_problem(answer, 503, "rate_limit_unavailable")
    assert not [name for name, statuses in seen.items() if 500 in statuses], seen

    not_ready = expect_problem(wait_for_readiness(live, 503), 503, "redis_unreachable")
    assert not_ready["rateLimitStorage"] == {"failedOpen": failed_open, "refused": refused}, not_ready
    forwarder.restore()
    ready = wait_for_readiness(live, 200)
    assert ready.status_code == 200, ready.text
    assert ready.json()["rateLimitStorage"] == {"failedOpen": failed_open, "refused": refused}

    # Redis is back: counted again (the headers say so), and the site's log-in works.
    assert "ratelimit" in agent.http.get("/v1/agent/tasks").headers
    assert log_in(site_client(live.base_url), email, PASSWORD).status_code == 303
    log = live.log_path.read_text()
    assert "rate-limit counters do not answer" in log and "rate-limit counters answer again" in log
