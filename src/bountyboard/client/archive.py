"""A verifier's ``tests/`` directory packed as the service takes it: a ``.tar.gz`` whose entries sit under ``tests/``.

The packing is deterministic: entries in sorted order, no owner, no time (in the tar headers and in the
gzip header), mode ``0755`` for directories and executable files and ``0644`` for the others, so the
same files make the same bytes and the same ``sha256`` wherever they are packed. What the archive may
hold (regular files and directories, a ``tests/test.sh``, its bounds) is the service's rule, checked on
upload (``PUT /v1/tasks/{id}/verifier-archive``, docs/checks.md); a link or special file is packed as
what it is, for the service to refuse by name.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path
from typing import Any

ARCHIVE_ROOT = "tests"


def _entry(tar: tarfile.TarFile, path: Path, name: str) -> None:
    info = tar.gettarinfo(str(path), name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    info.mode = 0o755 if info.isdir() or (info.isreg() and info.mode & 0o111) else 0o644
    if info.isreg():
        with path.open("rb") as file:
            tar.addfile(info, file)
    else:
        tar.addfile(info)


def pack_tests(directory: str | Path) -> bytes:
    """The ``.tar.gz`` of ``directory`` as the verifier's ``tests/`` (whatever the directory's own name),
    built in memory."""
    root = Path(directory)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a directory")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _entry(tar, root, ARCHIVE_ROOT)
        for current, directories, files in os.walk(root):
            directories.sort()
            for name in sorted([*directories, *files]):
                path = Path(current, name)
                _entry(tar, path, f"{ARCHIVE_ROOT}/{path.relative_to(root).as_posix()}")
    return buffer.getvalue()


def verifier_archive(tests: str | Path) -> bytes:
    """The bytes to upload as a verifier: ``tests`` packed when a directory, else read (a ``.tar.gz`` of one)."""
    source = Path(tests)
    return pack_tests(source) if source.is_dir() else source.read_bytes()


def archive_verifier(checks: dict[str, Any] | None) -> dict[str, Any]:
    """The checks' verifier settings (``trials``...) that an uploaded archive completes with its ``archiveKey``;
    refused (``ValueError``, before any request) when they give the verifier's files inline as well."""
    verifier = dict((checks or {}).get("verifier") or {})
    if "files" in verifier:
        raise ValueError("the checks' verifier gives its files inline, and verifier_tests an archive: give one")
    return verifier
