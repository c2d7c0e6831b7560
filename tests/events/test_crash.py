"""Nothing is lost when a server dies (SIGKILL) or stops (SIGTERM) with deliveries queued or in flight."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.events.conftest import FAST, admin_of
from tests.events.helpers import account, attempts, emit, query, subscribe
from tests.events.receiver import Receiver, Reply
from tests.support.api import Admin
from tests.support.server import LiveServer, backends, database_url


@pytest.mark.parametrize("backend", backends())
def test_no_event_is_lost_to_sigkill_or_sigterm(backend: str, tmp_path: Path) -> None:
    env = {**FAST, "BOUNTYBOARD_SECRET_KEY": "crash-" + uuid.uuid4().hex}
    receiver = Receiver()  # not listening yet: every attempt is refused
    with database_url(backend, tmp_path) as url:
        first = LiveServer(tmp_path, url, env=env).start()
        try:
            admin = admin_of(first)
            operator = account(admin, "operator")
            hook = subscribe(operator, receiver.url, ["claim.reviewed"])
            emitted = emit(admin, "claim.reviewed", 200, operatorId=operator.id)
            attempts(operator, hook["id"], 3)  # the dispatcher is busy failing
        finally:
            first.kill()

        with receiver:
            second = LiveServer(tmp_path, url, env=env).start()
            try:
                # Leases held by the killed process run out; retries scheduled for later become due.
                Admin(second.base_url, admin.key).advance_clock(120)
                got = receiver.wait_for_ids(200, timeout=90)
                assert {r.id for r in got} == {e["id"] for e in emitted}
                for request in got:
                    request.verified(hook["secret"])

                # SIGTERM while the receiver takes 2 s to answer: the attempt finishes and is recorded.
                receiver.reply_with(Reply(200, delay=2.0))
                before = len(receiver.received)
                event = emit(Admin(second.base_url, admin.key), "claim.reviewed", operatorId=operator.id)[0]
                receiver.wait_until(lambda r: len(r) > before)
            finally:
                second.stop()

            # The stopped server recorded the attempt and marked the row delivered before exiting.
            assert query(url, "SELECT d.succeeded, d.status_code, m.status FROM webhook_deliveries d "
                              "JOIN webhook_messages m ON m.id = d.message_id WHERE d.event_id = %s",
                         event["id"]) == [(True, 200, "succeeded")]
            assert [r.id for r in receiver.received[before:]] == [event["id"]]


@pytest.mark.parametrize("backend", backends())
def test_a_sigkill_repeats_at_most_the_deliveries_in_flight(backend: str, tmp_path: Path) -> None:
    """Deliveries are marked done as they succeed: after each SIGKILL only the attempts under way
    (one per endpoint being sent to, at most ``webhook_concurrency``) are sent again."""
    concurrency, endpoints, kills = 3, 3, 2
    env = {**FAST, "BOUNTYBOARD_SECRET_KEY": "crash-" + uuid.uuid4().hex,
           "BOUNTYBOARD_WEBHOOK_CONCURRENCY": str(concurrency)}
    with database_url(backend, tmp_path) as url, Receiver() as receiver:
        receiver.default = Reply(200, delay=0.02)  # slow enough that every kill lands mid-batch
        server = LiveServer(tmp_path, url, env=env).start()
        admin = admin_of(server)
        operator = account(admin, "operator")
        for n in range(endpoints):
            subscribe(operator, f"{receiver.url}/{n}", ["claim.reviewed"])
        emitted = emit(admin, "claim.reviewed", 200, operatorId=operator.id)
        total = endpoints * len(emitted)
        for _ in range(kills):
            before = len(receiver.received)
            receiver.wait_until(lambda got, before=before: len(got) >= before + 60, timeout=60)
            server.kill()
            server = LiveServer(tmp_path, url, env=env).start()
            Admin(server.base_url, admin.key).advance_clock(120)  # the killed process's leases run out
        try:
            got = receiver.wait_until(lambda got: len({(r.path, r.id) for r in got}) >= total, timeout=120)
        finally:
            server.stop()
        duplicates = len(got) - len({(r.path, r.id) for r in got})
        print(f"{backend}: {duplicates} duplicates over {kills} kills ({total} deliveries)")
        assert duplicates <= kills * concurrency
