"""Local state that must survive a crash: claim ids, pending idempotency keys, the worker's step.

One JSON file per API key, written atomically (temporary file, fsync, rename), so a process killed
at any instant leaves either the previous or the next state on disk, never a torn one.
The file belongs to one process at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def config_dir() -> Path:
    """Where the CLI keeps its configuration (``BOUNTYBOARD_CONFIG_DIR`` or the XDG config dir)."""
    explicit = os.environ.get("BOUNTYBOARD_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "bountyboard"


def state_dir() -> Path:
    """Where crash-safe state lives (``BOUNTYBOARD_STATE_DIR`` or the XDG state dir)."""
    explicit = os.environ.get("BOUNTYBOARD_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "bountyboard"


def default_state_path(api_key: str | None) -> Path:
    """One state file per key, named by a digest so the key itself never lands in a file name."""
    digest = hashlib.sha256((api_key or "anonymous").encode()).hexdigest()[:16]
    return state_dir() / f"state-{digest}.json"


def write_private(path: Path, text: str) -> None:
    """Atomically replace ``path`` with ``text``, readable by the owner only (mode 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class StateFile:
    """A JSON object on disk; :meth:`update` changes it and writes it through at once.

    Without a path it lives in memory only (for a process that keeps no state of its own, such as
    the service's MCP endpoint, whose callers own their retries).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        exists = path is not None and path.exists()
        self.data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path and exists else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def update(self, **changes: Any) -> None:
        """Set (or, with None, remove) top-level entries and persist before returning."""
        for key, value in changes.items():
            if value is None:
                self.data.pop(key, None)
            else:
                self.data[key] = value
        if self.path is not None:
            write_private(self.path, json.dumps(self.data, indent=2, sort_keys=True))
