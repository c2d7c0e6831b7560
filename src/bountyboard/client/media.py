"""The media type of a file about to be uploaded, read as the service will read it."""

from __future__ import annotations

import mimetypes
from pathlib import Path

import filetype

from bountyboard.contract.artifacts import BY_SUFFIX, HEAD_BYTES, normalise


def guess_mime_type(path: Path) -> str:
    """A file's media type: from its magic numbers, else from its name, else generic bytes."""
    with path.open("rb") as file:
        kind = filetype.guess(file.read(HEAD_BYTES))
    if kind is not None:
        return normalise(kind.mime)
    guessed = BY_SUFFIX.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    return normalise(guessed or "application/octet-stream")
