"""Webhook dispatch: deliveries per second to a loopback receiver, and event-to-delivery latency.

Subscriptions point at a threaded HTTP receiver on loopback that answers 200 at once.

- throughput: with the API's dispatcher off, ``--events`` events are queued through the server's
  own emit() for one subscription, then one ``bountyboard worker`` is started and the backlog
  drained; the figure is deliveries per second from the first to the last arrival. One endpoint's
  deliveries go one at a time, in order; the same is repeated with ``--events`` / 8 events fanned
  out to eight subscriptions, which are sent to in parallel;
- latency: ``bountyboard serve`` with its in-process dispatcher (the embedded default) and
  ``--trickle`` single events, one every 50 ms; each arrival time minus the event's ``timestamp``
  (same machine, same clock), p50 and p99;
- steady load: ``--rate`` events per second for ``--seconds`` (open loop: each emit is sent on its
  schedule whether or not the previous one has been answered), delivered by serve's in-process
  dispatcher and then by a separate ``bountyboard worker`` (serve's dispatcher off); event-to-delivery
  p50, p99 and max. Target: p99 under 250 ms.

    .venv/bin/python -m perf.webhook_dispatch [--backend sqlite|postgresql] [--events 2000] [--trickle 200]
        [--rate 100] [--seconds 60] [--only steady]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
from tests.events.conftest import admin_of
from tests.events.helpers import account, emit, subscribe
from tests.events.receiver import Receiver
from tests.support.api import Admin
from tests.support.server import LiveServer, database_url, free_port

_BURST = 250


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _drain(server: LiveServer, receiver: Receiver, admin: Admin, endpoints: int, events: int, label: str) -> None:
    owner = account(admin, "operator")
    for n in range(endpoints):
        subscribe(owner, f"{receiver.url}?endpoint={n}", ["claim.reviewed"])
    for offset in range(0, events, _BURST):
        emit(admin, "claim.reviewed", min(_BURST, events - offset), operatorId=owner.id)
    before = len(receiver.received)
    worker = subprocess.Popen([sys.executable, "-m", "bountyboard", "worker"], env=server.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        got = receiver.wait_until(lambda r: len(r) >= before + events * endpoints, timeout=900)[before:]
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    span = got[-1].at - got[0].at
    print(f"[{server.backend}] {label}: {len(got)} deliveries in {span:.2f} s = {len(got) / span:.0f}/s")


def throughput(backend: str, events: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env={"BOUNTYBOARD_RUN_DISPATCHER": "false"}) as server, Receiver() as receiver:
        admin = admin_of(server)
        _drain(server, receiver, admin, 1, events, "one endpoint, backlog drained by one worker")
        _drain(server, receiver, admin, 8, events // 8, "eight endpoints, backlog drained by one worker")


def latency(backend: str, trickle: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url) as server, Receiver() as receiver:
        admin = admin_of(server)
        operator = account(admin, "operator")
        subscribe(operator, receiver.url, ["claim.reviewed"])
        sent = {}
        for _ in range(trickle):
            event = emit(admin, "claim.reviewed", operatorId=operator.id)[0]
            sent[event["id"]] = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
            time.sleep(0.05)
        arrivals = receiver.wait_until(lambda r: len(r) >= trickle, timeout=120)
        latencies = [(r.at - sent[r.id]) * 1000 for r in arrivals]
        print(f"[{backend}] latency in serve over {trickle} events: p50 {_percentile(latencies, 0.5):.0f} ms, "
              f"p99 {_percentile(latencies, 0.99):.0f} ms, mean {statistics.fmean(latencies):.0f} ms")


async def _emit_steadily(base_url: str, admin_key: str, operator_id: str, rate: float,
                         seconds: float) -> dict[str, float]:
    """Event id -> its timestamp, for ``rate`` emits a second sent on schedule for ``seconds``."""
    sent: dict[str, float] = {}
    failed = 0
    # Idle connections are dropped before the server's keep-alive timeout (5 s) could close one under
    # a request being sent.
    limits = httpx.Limits(max_connections=64, keepalive_expiry=2)
    async with httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {admin_key}"},
                                 limits=limits, timeout=30) as http:

        async def one() -> None:
            nonlocal failed
            try:
                response = await http.post("/v1/admin/events", json={"type": "claim.reviewed", "count": 1,
                                                                      "operatorId": operator_id})
                response.raise_for_status()
            except httpx.HTTPError:
                failed += 1
                return
            event = response.json()["data"][0]
            sent[event["id"]] = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()

        started = time.perf_counter()
        pending = []
        for index in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, started + index / rate - time.perf_counter()))
            pending.append(asyncio.create_task(one()))
        await asyncio.gather(*pending)
        print(f"  {len(sent)} events emitted in {time.perf_counter() - started:.1f} s ({failed} emits failed)",
              flush=True)
    return sent


def _receive(port: int, connection: Connection) -> None:
    """The body of ``_ReceiverProcess``: for each question ``(count, timeout)``, the arrivals (webhook
    id, time) so far once ``count`` have come."""
    with Receiver(port=port) as receiver:
        connection.send("ready")
        while True:
            count, timeout = connection.recv()
            try:
                got = receiver.wait_until(lambda r, wanted=count: len(r) >= wanted, timeout=timeout)
            except AssertionError as exc:
                connection.send(exc)
                return
            connection.send([(r.id, r.at) for r in got])


class _ReceiverProcess:
    """A ``Receiver`` in a process of its own. Beside the emitting loop, its threads would wait for the
    emitter's GIL, and that wait would be measured as delivery latency."""

    def __enter__(self) -> _ReceiverProcess:
        self._connection, child = multiprocessing.Pipe()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/hook"
        self._process = multiprocessing.get_context("spawn").Process(target=_receive, args=(port, child), daemon=True)
        self._process.start()
        self._connection.recv()
        return self

    def arrivals(self, count: int, timeout: float) -> list[tuple[str, float]]:
        self._connection.send((count, timeout))
        answer = self._connection.recv()
        if isinstance(answer, Exception):
            raise answer
        return list(answer)

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.join()


def steady(backend: str, rate: float, seconds: float, separate_worker: bool) -> float:
    """p99 event-to-delivery latency (ms) at a steady rate, by serve's dispatcher or a separate worker."""
    env: dict[str, str | None] = {"BOUNTYBOARD_RUN_DISPATCHER": "false"} if separate_worker else {}
    label = "separate worker" if separate_worker else "serve's dispatcher"
    with tempfile.TemporaryDirectory() as tmp, database_url(backend, Path(tmp)) as url, \
            LiveServer(Path(tmp), url, env=env) as server, _ReceiverProcess() as receiver:
        admin = admin_of(server)
        operator = account(admin, "operator")
        subscribe(operator, receiver.url, ["claim.reviewed"])
        worker = subprocess.Popen([sys.executable, "-m", "bountyboard", "worker"], env=server.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if separate_worker else None
        try:
            # One event delivered first: the load is measured once the dispatcher runs, not while the
            # worker process starts.
            emit(admin, "claim.reviewed", operatorId=operator.id)
            receiver.arrivals(1, timeout=60)
            sent = asyncio.run(_emit_steadily(server.base_url, admin.key, operator.id, rate, seconds))
            arrivals = receiver.arrivals(1 + len(sent), timeout=300)
        finally:
            if worker is not None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=60)
    latencies = [(at - sent[event_id]) * 1000 for event_id, at in arrivals if event_id in sent]
    p99 = _percentile(latencies, 0.99)
    print(f"[{backend}] {rate:.0f} events/s for {seconds:.0f} s, {label}: {len(latencies)} deliveries, "
          f"p50 {_percentile(latencies, 0.5):.0f} ms, p99 {p99:.0f} ms, max {max(latencies):.0f} ms", flush=True)
    return p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], action="append")
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--trickle", type=int, default=200)
    parser.add_argument("--rate", type=float, default=100.0, help="events per second of the steady load")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the steady load")
    parser.add_argument("--only", choices=["throughput", "latency", "steady"], action="append")
    args = parser.parse_args()
    only = set(args.only or ["throughput", "latency", "steady"])
    for backend in args.backend or ["sqlite", "postgresql"]:
        if "throughput" in only:
            throughput(backend, args.events)
        if "latency" in only:
            latency(backend, args.trickle)
        if "steady" in only:
            for separate_worker in (False, True):
                steady(backend, args.rate, args.seconds, separate_worker)


if __name__ == "__main__":
    main()
