"""A real HTTP webhook receiver on loopback, for tests and benchmarks.

It records every request (headers, body, arrival time) and answers from a script of statuses
(then 200). ``verified`` checks a request with the standardwebhooks library's own ``verify``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook

from tests.support.server import free_port


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.time() on arrival
    path: str = "/hook"

    @property
    def id(self) -> str:
        return self.headers["webhook-id"]

    def verified(self, secret: str) -> dict[str, Any]:
        """The parsed payload, or WebhookVerificationError."""
        return Webhook(secret).verify(self.body, self.headers)  # type: ignore[no-any-return]


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"
    delay: float = 0.0  # seconds to wait before answering


class Receiver:
    def __init__(self, port: int | None = None, bind: str = "127.0.0.1") -> None:
        self.bind = bind
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.received: list[Received] = []
        self.script: list[Reply] = []
        self.default = Reply()  # the answer when the script is spent
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    def reply_with(self, *replies: Reply | int) -> None:
        """Answer the next requests with these (a bare int is a status), then 200 again."""
        with self._changed:
            self.script.extend(r if isinstance(r, Reply) else Reply(r) for r in replies)

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver._changed:
                    reply = receiver.script.pop(0) if receiver.script else receiver.default
                    receiver.received.append(Received({k.lower(): v for k, v in self.headers.items()}, body,
                                                      time.time(), self.path))
                    receiver._changed.notify_all()
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((self.bind, self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def wait_until(self, condition: Callable[[list[Received]], bool], timeout: float = 20.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self.received):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"receiver condition not met in {timeout} s; got {len(self.received)} "
                                         f"requests: {[r.headers.get('webhook-id') for r in self.received[-10:]]}")
                self._changed.wait(remaining)
            return list(self.received)

    def wait_for_ids(self, count: int, timeout: float = 20.0) -> list[Received]:
        return self.wait_until(lambda got: len({r.id for r in got}) >= count, timeout)

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
