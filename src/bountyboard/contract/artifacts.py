"""Artifact types (SPEC.md section 1) and the media types each is submitted as.

The service checks an upload's bytes against these rules (``files.content_types``); the SDK uses
them to name the artifact type of a file it uploads.
"""

from __future__ import annotations

from enum import StrEnum


class ArtifactType(StrEnum):
    TEXT = "text"
    IMAGE = "image"
    DOCUMENT = "document"
    AUDIO = "audio"
    GITHUB_URL = "github_url"
    WEB_APP_URL = "web_app_url"
    EXTERNAL_LINK = "external_link"


# How many leading bytes a signature (magic number) check reads.
HEAD_BYTES = 8192

_ALIASES = {
    "audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav",
    "audio/x-flac": "audio/flac", "audio/mp3": "audio/mpeg", "image/jpg": "image/jpeg",
    "image/x-png": "image/png", "application/x-pdf": "application/pdf",
}
_TEXT_APPLICATION = frozenset({"application/json", "application/xml", "application/x-ndjson", "image/svg+xml",
                               "application/javascript", "application/yaml"})
# Suffixes the platform's table may lack.
BY_SUFFIX = {".md": "text/markdown", ".markdown": "text/markdown", ".jsonl": "application/x-ndjson"}
# Images a browser draws without running anything: only these (and audio) are shown inline.
RASTER_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})


def normalise(mime_type: str) -> str:
    """The media type in lower case, under its one accepted name (``image/jpg`` is ``image/jpeg``)."""
    mime_type = mime_type.strip().lower()
    return _ALIASES.get(mime_type, mime_type)


def is_textual(mime_type: str) -> bool:
    return mime_type.startswith("text/") or mime_type in _TEXT_APPLICATION


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
