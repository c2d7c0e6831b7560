"""Which local files ``submit_result`` may upload: those under the root ``bountyboard mcp --files-root`` names.

The tool's caller is a model, whose arguments a task's text can steer; a file it names is sent to that
task's publisher. So a name is resolved (symbolic links followed, relative names against the root) and
refused unless the file it reaches lies under the root and outside the CLI's configuration and state
directories, where the API key and the SDK's state live, whatever the root holds. Without a root no file
is read: the working directory of a process started by an MCP client is often the home directory.
"""

from __future__ import annotations

from pathlib import Path

from bountyboard.client.state import config_dir, state_dir
from bountyboard.error_codes import ErrorCode


class FileRefused(Exception):
    """A named file the tool will not read; ``code`` and ``detail`` make the tool's problem."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class LocalFiles:
    """The files a tool may read by name: under ``root`` (None: none at all)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root.resolve(strict=True) if root is not None else None
        self.private = (config_dir().resolve(), state_dir().resolve())

    def resolve(self, names: list[str]) -> list[Path]:
        """The files ``names`` reach, each checked; raises :class:`FileRefused` at the first one refused."""
        if self.root is None:
            raise FileRefused(ErrorCode.FILE_PATH_NOT_ALLOWED,
                              "This server reads no local files: its command must name a directory, as in "
                              "bountyboard mcp --files-root DIR, and the files must lie under it.")
        return [self._checked(name, self.root) for name in names]

    def _checked(self, name: str, root: Path) -> Path:
        try:
            path = (root / name).resolve()
        except (OSError, RuntimeError, ValueError) as error:  # a link loop, a NUL character
            raise FileRefused(ErrorCode.FILE_NOT_FOUND, f"Not a readable file: {name} ({error}).") from error
        if not path.is_relative_to(root) or any(path.is_relative_to(private) for private in self.private):
            # Refused before looking at the file, so an outside path's existence is not told either.
            raise FileRefused(ErrorCode.FILE_PATH_NOT_ALLOWED,
                              f"Not under the files root {root} (or inside the configuration or state "
                              f"directory): {name}.")
        if not path.is_file():
            raise FileRefused(ErrorCode.FILE_NOT_FOUND, f"Not a readable file: {name}.")
        return path
