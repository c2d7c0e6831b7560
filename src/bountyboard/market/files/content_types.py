"""What the bytes of a file really are, and which media types fit which artifact type.

Binary formats are recognised by their magic numbers (the ``filetype`` library). Text formats
(plain text, markdown, HTML, SVG, JSON...) have none, so they are accepted only when declared as
text and the bytes are UTF-8 that no binary signature matches.
"""

from __future__ import annotations

import codecs
import mimetypes
from pathlib import Path

import filetype

from bountyboard.market.modules import ArtifactType

# How many leading bytes the signature check reads.
HEAD_BYTES = 8192

_ALIASES = {
    "audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav",
    "audio/x-flac": "audio/flac", "audio/mp3": "audio/mpeg", "image/jpg": "image/jpeg",
    "image/x-png": "image/png", "application/x-pdf": "application/pdf",
}
_TEXT_APPLICATION = frozenset({"application/json", "application/xml", "application/x-ndjson", "image/svg+xml",
                               "application/javascript", "application/yaml"})
# Suffixes the platform's table may lack.
_BY_SUFFIX = {".md": "text/markdown", ".markdown": "text/markdown", ".jsonl": "application/x-ndjson"}
# Images a browser draws without running anything: only these (and audio) are shown inline.
RASTER_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})


def normalise(mime_type: str) -> str:
    mime_type = mime_type.strip().lower()
    return _ALIASES.get(mime_type, mime_type)


def is_textual(mime_type: str) -> bool:
    return mime_type.startswith("text/") or mime_type in _TEXT_APPLICATION


def shown_inline(mime_type: str) -> bool:
    return mime_type in RASTER_IMAGES or mime_type.startswith("audio/")


class Sniffer:
    """Fed the bytes in order; tells what they are against what was declared."""

    def __init__(self, declared: str) -> None:
        self.declared = normalise(declared)
        self._head = b""
        self._utf8 = codecs.getincrementaldecoder("utf-8")() if is_textual(self.declared) else None
        self._is_utf8 = True

    def feed(self, chunk: bytes) -> None:
        if len(self._head) < HEAD_BYTES:
            self._head += chunk[: HEAD_BYTES - len(self._head)]
        if self._utf8 is not None and self._is_utf8:
            try:
                self._utf8.decode(chunk)
            except UnicodeDecodeError:
                self._is_utf8 = False

    def mismatch(self) -> str | None:
        """Why the bytes are not what was declared, or None when they are."""
        kind = filetype.guess(self._head)
        detected = normalise(kind.mime) if kind is not None else None
        if detected is not None:
            if detected != self.declared:
                return f"the bytes are {detected}, not the declared {self.declared}"
            return None
        if not is_textual(self.declared):
            return f"the bytes are not recognisable as {self.declared}"
        if self._utf8 is not None:
            try:
                self._utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                self._is_utf8 = False
        if not self._is_utf8:
            return f"{self.declared} must be UTF-8 text"
        if self.declared == "image/svg+xml" and b"<svg" not in self._head.lower():
            return "the bytes are not an SVG document"
        return None


def fits_artifact(kind: ArtifactType, mime_type: str) -> bool:
    """Whether a stored file of this media type may be an attachment of this artifact type."""
    if kind is ArtifactType.IMAGE:
        return mime_type.startswith("image/")
    if kind is ArtifactType.AUDIO:
        return mime_type.startswith("audio/")
    if kind is ArtifactType.DOCUMENT:
        return not mime_type.startswith(("image/", "audio/", "video/"))
    if kind is ArtifactType.TEXT:
        return is_textual(mime_type)
    return False  # links are content, not files


def artifact_type_for(mime_type: str) -> ArtifactType:
    """The artifact type a file of this media type is submitted as, when the sender does not say."""
    mime_type = normalise(mime_type)
    if mime_type in RASTER_IMAGES or mime_type == "image/svg+xml":
        return ArtifactType.IMAGE
    if mime_type.startswith("audio/"):
        return ArtifactType.AUDIO
    if mime_type.startswith("text/") and mime_type != "text/html":
        return ArtifactType.TEXT
    return ArtifactType.DOCUMENT


def guess_mime_type(path: Path) -> str:
    """A file's media type: from its magic numbers, else from its name, else generic bytes."""
    with path.open("rb") as file:
        kind = filetype.guess(file.read(HEAD_BYTES))
    if kind is not None:
        return normalise(kind.mime)
    guessed = _BY_SUFFIX.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    return normalise(guessed or "application/octet-stream")
