"""What the bytes of a file really are, and which media types fit which artifact type.

Binary formats are recognised by their magic numbers (the ``filetype`` library). Text formats
(plain text, markdown, HTML, SVG, JSON...) have none, so they are accepted only when declared as
text and the bytes are UTF-8 that no binary signature matches. The media types themselves (aliases,
which are text, which artifact type a file is submitted as) are ``contract.artifacts``.
"""

from __future__ import annotations

import codecs

import filetype

from bountyboard.contract.artifacts import HEAD_BYTES, RASTER_IMAGES, ArtifactType, is_textual, normalise


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
