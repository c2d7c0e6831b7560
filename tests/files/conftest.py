"""Live servers for the file tests: each database backend with each storage backend.

The S3 backend is a real S3-compatible server (moto's server mode) started here on loopback; the
service reaches it through ``BOUNTYBOARD_STORAGE_URL`` and ``BOUNTYBOARD_STORAGE_ENDPOINT_URL``
with credentials from the usual ``AWS_*`` variables, as it would reach AWS.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from tests.files.support import FileServer
from tests.market.support import Market
from tests.site.conftest import browser
from tests.support.api import Admin
from tests.support.server import LiveServer, backends, database_url, free_port

BUCKET = "bountyboard-test"
AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1"}
_prefixes = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "storage(name): run only against file servers of this storage (local or s3)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``storage("local")`` (about the service's own upload URL) or ``storage("s3")`` (about
    presigned URLs) is collected only with the file servers of that storage."""
    kept, other = [], []
    for item in items:
        marker = item.get_closest_marker("storage")
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        wrong = marker is not None and "files_server" in params and params["files_server"][1] not in marker.args
        (other if wrong else kept).append(item)
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = kept


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                 region_name="us-east-1").create_bucket(Bucket=BUCKET)
    yield endpoint
    moto.stop()


@pytest.fixture(scope="session", params=[(db, storage) for db in backends() for storage in ("local", "s3")],
                ids=lambda param: f"{param[0]}-{param[1]}")
def files_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FileServer]:
    backend, storage = request.param
    data_dir: Path = tmp_path_factory.mktemp(f"files-{backend}-{storage}")
    env: dict[str, str | None] = {
        "BOUNTYBOARD_SWEEP_INTERVAL_SECONDS": "0.5", "BOUNTYBOARD_UPLOAD_MAX_FILE_BYTES": "300000",
        "BOUNTYBOARD_UPLOAD_MAX_CLAIM_BYTES": "700000", "BOUNTYBOARD_UPLOAD_URL_TTL_SECONDS": "300",
        "BOUNTYBOARD_UPLOAD_UNUSED_TTL_SECONDS": "600", "BOUNTYBOARD_UPLOAD_MAX_PENDING_PER_CLAIM": "4",
        "BOUNTYBOARD_UPLOAD_MAX_PENDING_PER_KEY": "6", "BOUNTYBOARD_REJECTED_FILE_RETENTION_DAYS": "2",
    }
    prefix = f"server-{next(_prefixes)}"
    if storage == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        env |= {**AWS_ENV, "BOUNTYBOARD_STORAGE_URL": f"s3://{BUCKET}/{prefix}",
                "BOUNTYBOARD_STORAGE_ENDPOINT_URL": endpoint}
    with database_url(backend, data_dir) as url, LiveServer(data_dir, url, env) as live:
        yield FileServer(live, storage, BUCKET, prefix, env.get("BOUNTYBOARD_STORAGE_ENDPOINT_URL"))


@pytest.fixture(scope="session")
def files_admin(files_server: FileServer) -> Admin:
    return Admin.of(files_server.live)


@pytest.fixture
def market(files_admin: Admin) -> Market:
    return Market(files_admin)


__all__ = ["browser"]
