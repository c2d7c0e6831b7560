"""GET routes read from a streaming standby (``BOUNTYBOARD_DATABASE_READ_URL``), and a caller that just
wrote reads its write from the primary for a while (read-your-writes).

With the standby's replay paused, what the primary commits stays off the standby: a GET that does not
show it was served by the standby, one that does by the primary.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.events.helpers import emit, feed
from tests.support import standby
from tests.support.api import Account, Admin, client
from tests.support.server import LiveServer

WINDOW = 1.5  # seconds a caller that wrote reads from the primary

@dataclass
class HasKey:
    http: httpx.Client


pytestmark = pytest.mark.skipif(standby.missing() is not None, reason=str(standby.missing()))


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, standby.Pair]]:
    with standby.primary_and_standby() as pair:
        env: dict[str, str | None] = {"BOUNTYBOARD_DATABASE_READ_URL": pair.url(pair.standby_port),
               "BOUNTYBOARD_READ_YOUR_WRITES_SECONDS": str(WINDOW)}
        with LiveServer(tmp_path_factory.mktemp("replica"), pair.url(pair.primary_port), env=env) as live:
            yield live, pair


def _hooks(key: str, server: LiveServer) -> set[str]:
    with client(server.base_url, key) as http:
        response = http.get("/v1/agent/webhooks")
    assert response.status_code == 200, response.text
    return {hook["url"] for hook in response.json()["data"]}


def _subscribe(operator: Account, url: str) -> None:
    response = operator.http.post("/v1/agent/webhooks", json={"url": url, "events": ["claim.reviewed"]})
    assert response.status_code == 201, response.text


def test_gets_read_the_standby_and_a_writer_reads_its_writes(
        replicated: tuple[LiveServer, standby.Pair]) -> None:
    server, pair = replicated
    operator = Admin.of(server).account("operator")
    other_key = operator.new_key(["webhooks:manage", "claims:read"])  # the same operator, another caller
    _subscribe(operator, "https://93.184.216.34/before")
    pair.caught_up()
    time.sleep(WINDOW)  # the operator's key is no longer a recent writer
    assert _hooks(other_key, server) == _hooks(operator.key, server) == {"https://93.184.216.34/before"}

    pair.replay(paused=True)
    try:
        _subscribe(operator, "https://93.184.216.34/after")
        everything = {"https://93.184.216.34/before", "https://93.184.216.34/after"}
        # The writer's next read sees its write: it is read from the primary.
        assert _hooks(operator.key, server) == everything
        # Another caller's GET is served by the standby, which has not replayed the write.
        assert _hooks(other_key, server) == {"https://93.184.216.34/before"}
        # Once the window has passed, the writer's GETs go to the standby again.
        time.sleep(WINDOW + 0.2)
        assert _hooks(operator.key, server) == {"https://93.184.216.34/before"}
    finally:
        pair.replay(paused=False)
    pair.caught_up()
    assert _hooks(other_key, server) == _hooks(operator.key, server) == everything



def test_the_feed_read_from_the_standby_shows_what_it_has_replayed(
        replicated: tuple[LiveServer, standby.Pair]) -> None:
    server, pair = replicated
    admin = Admin.of(server)
    operator = admin.account("operator")
    reader = operator.new_key(["claims:read"])
    first = emit(admin, "claim.reviewed", operatorId=operator.id)
    pair.caught_up()

    def feed_ids() -> list[str]:
        with client(server.base_url, reader) as http:
            return [event["id"] for event in feed(HasKey(http))]

    assert feed_ids() == [first[0]["id"]]  # the horizon of a hot standby's snapshot
    pair.replay(paused=True)
    try:
        second = emit(admin, "claim.reviewed", operatorId=operator.id)
        assert feed_ids() == [first[0]["id"]]
    finally:
        pair.replay(paused=False)
    pair.caught_up()
    assert feed_ids() == [first[0]["id"], second[0]["id"]]
