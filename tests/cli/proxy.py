"""A loopback HTTP proxy that can swallow one answer: the request reaches the service and is
processed, but its response never comes back, as when a connection dies after the server committed.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

import httpx

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}


class SwallowingProxy:
    """Forwards everything to ``upstream``, noting each request in ``forwarded`` (method, path); holds the answer
    of the first POST whose path matches ``hold_path`` (None: holds none)."""

    def __init__(self, upstream: str, hold_path: str | None = None) -> None:
        self.upstream = upstream
        self.hold = re.compile(hold_path) if hold_path is not None else None
        self.forwarded: list[tuple[str, str]] = []
        self.held = threading.Event()
        self.held_status: int | None = None
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                proxy.forwarded.append((self.command, self.path))
                answer = httpx.request(self.command, proxy.upstream + self.path, headers=headers, content=body,
                                       timeout=30)
                held = proxy.hold is not None and proxy.hold.search(self.path) is not None
                if self.command == "POST" and held and not proxy.held.is_set():
                    proxy.held_status = answer.status_code
                    proxy.held.set()
                    proxy._release.wait(60)  # the client is killed meanwhile; nothing is sent back
                    return
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in _HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = do_PATCH = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SwallowingProxy:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
