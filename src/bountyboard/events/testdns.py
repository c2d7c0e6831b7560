"""Name resolution a test controls, to show over a live server that webhooks resist DNS rebinding.

Active only in a test deployment (``BOUNTYBOARD_ENABLE_TEST_CLOCK=true``) with
``BOUNTYBOARD_TEST_HOSTS_FILE`` naming a JSON file ``{"name": [answer, answer, ...]}``, where an
answer is an address or a list of addresses. The n-th lookup of a listed name since the file last
changed gets the n-th answer (the last one repeats), as a rebinding DNS server would answer. The
process's resolver itself (``socket.getaddrinfo``) is replaced, so every lookup, whoever makes it,
sees these answers; other names resolve as usual.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter
from typing import Any

from bountyboard.config import Settings

_system_getaddrinfo = socket.getaddrinfo


def install(settings: Settings) -> None:
    if not (settings.enable_test_clock and settings.test_hosts_file) or socket.getaddrinfo is not _system_getaddrinfo:
        return
    path = settings.test_hosts_file
    lock = threading.Lock()  # lookups run in executor threads
    seen = {"text": ""}
    table: dict[str, list[Any]] = {}
    lookups: Counter[str] = Counter()

    def next_answer(name: str) -> list[str] | None:
        with lock:
            text = path.read_text() if path.exists() else "{}"
            if text != seen["text"]:
                seen["text"] = text
                table.clear()
                table.update({key.lower(): value for key, value in json.loads(text).items()})
                lookups.clear()
            answers = table.get(name.lower().rstrip("."))
            if not answers:
                return None
            answer = answers[min(lookups[name], len(answers) - 1)]
            lookups[name] += 1
        return [answer] if isinstance(answer, str) else list(answer)

    def getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0,
                    flags: int = 0) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        addresses = next_answer(name)
        if addresses is None:
            return _system_getaddrinfo(host, port, family, type, proto, flags)
        number = int(port or 0)
        return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, number, 0, 0))
                if ":" in address else
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, number))
                for address in addresses]

    socket.getaddrinfo = getaddrinfo
