"""A loopback TCP forwarder that can be cut or stalled: stands for a Redis that stops answering."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpForwarder:
    """Forwards connections on ``port`` (a free one) to ``upstream``; :meth:`cut` drops them all and
    refuses new ones, :meth:`stall` drops them all and accepts new ones that never get an answer (a
    Redis that hangs), :meth:`restore` forwards again on the same port."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()

    def restore(self) -> None:
        self.cut()
        threading.Thread(target=self._accept, args=(self._listen(),), daemon=True).start()

    def stall(self) -> None:
        self.cut()
        threading.Thread(target=self._hold, args=(self._listen(),), daemon=True).start()

    def _listen(self) -> socket.socket:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        return listener

    def cut(self) -> None:
        with self._lock:
            sockets, self._open = self._open, []
            if self._listener is not None:
                sockets.append(self._listener)
                self._listener = None
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            with self._lock:
                self._open += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _hold(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._open.append(client)

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def __enter__(self) -> TcpForwarder:
        self.restore()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.cut()
