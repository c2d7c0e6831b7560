"""Files a verifier run reads, laid out on the host before the sandbox mounts them read-only.

* The **bundle**: a publisher's ``tests/`` directory, given inline (``{"test.sh": "...", "data/a.json":
  "..."}``, paths under ``tests/``) or as a ``.tar.gz`` whose entries sit under ``tests/``. An archive is
  extracted entry by entry, never with ``extractall``: only regular files and directories, no absolute
  path, no ``..``, no link, device or FIFO, and bounded in entries and in bytes actually read (a
  gzip bomb stops at the bound). Every file is written ``0644`` (``0755`` when executable in the
  archive), owned by this process.
* The **submission**: ``content.txt`` (the content, or empty), ``submission.json`` (the body as
  submitted) and ``attachments/<fileName>`` (the bytes of each attachment the caller fetched).

Both are named by a **tree hash** (:func:`tree_sha256`): SHA-256 over the sorted lines
``<path>\\0<sha256 of its bytes>\\0<x or ->\\n`` of every file, so an inline bundle and the same files
archived have one hash, and a replay can prove it ran on the same inputs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

MAX_FILES = 500
MAX_BUNDLE_BYTES = 50 << 20
MAX_PATH_CHARS = 255
TEST_SCRIPT = "test.sh"


class BundleError(ValueError):
    """The bundle or the submission cannot be laid out as given (the message says why)."""


def _clean_path(name: str) -> PurePosixPath:
    if "\0" in name or "\\" in name or len(name) > MAX_PATH_CHARS:
        raise BundleError(f"refused path {name[:80]!r}: NUL, backslash or longer than {MAX_PATH_CHARS}")
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts):
        raise BundleError(f"refused path {name[:80]!r}: it must be relative, without '.' or '..'")
    return path


def _write(root: Path, relative: PurePosixPath, data: bytes, executable: bool = False) -> None:
    target = root.joinpath(*relative.parts)
    for depth in range(1, len(relative.parts)):
        directory = root.joinpath(*relative.parts[:depth])
        if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
            raise BundleError(f"refused path {relative}: {directory.relative_to(root)} is not a directory")
        directory.mkdir(mode=0o755, exist_ok=True)
    if target.exists() or target.is_symlink():
        raise BundleError(f"refused path {relative}: given twice")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(target, 0o755 if executable else 0o644)  # whatever this process's umask says


def write_inline(files: Mapping[str, str], tests_dir: Path) -> None:
    """Inline files (paths relative to ``tests/``) into ``tests_dir``."""
    if len(files) > MAX_FILES:
        raise BundleError(f"at most {MAX_FILES} files")
    total = 0
    tests_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
    for name, text in sorted(files.items()):
        data = text.encode()
        total += len(data)
        if total > MAX_BUNDLE_BYTES:
            raise BundleError(f"the files add up to more than {MAX_BUNDLE_BYTES} bytes")
        path = _clean_path(name.removeprefix("tests/"))
        _write(tests_dir, path, data, executable=path.suffix == ".sh")
    _require_test_script(tests_dir)


def extract_archive(archive: bytes, tests_dir: Path) -> None:
    """A ``.tar.gz`` of a ``tests/`` directory, safely, into ``tests_dir``."""
    tests_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
    total = count = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            for member in tar:
                count += 1
                if count > MAX_FILES * 2:
                    raise BundleError(f"the archive has more than {MAX_FILES * 2} entries")
                name = member.name.removeprefix("./")
                if name.rstrip("/") in ("tests", ""):
                    continue
                if not name.startswith("tests/"):
                    raise BundleError(f"refused entry {member.name[:80]!r}: every entry must be under tests/")
                path = _clean_path(name.removeprefix("tests/").rstrip("/"))
                if member.isdir():
                    target = tests_dir.joinpath(*path.parts)
                    if target.is_symlink() or (target.exists() and not target.is_dir()):
                        raise BundleError(f"refused entry {member.name[:80]!r}")
                    target.mkdir(mode=0o755, parents=True, exist_ok=True)
                    continue
                if not member.isreg():
                    raise BundleError(f"refused entry {member.name[:80]!r}: only regular files and directories")
                source = tar.extractfile(member)
                if source is None:
                    raise BundleError(f"refused entry {member.name[:80]!r}: unreadable")
                data = source.read(MAX_BUNDLE_BYTES - total + 1)
                total += len(data)
                if total > MAX_BUNDLE_BYTES:
                    raise BundleError(f"the archive unpacks to more than {MAX_BUNDLE_BYTES} bytes")
                _write(tests_dir, path, data, executable=bool(member.mode & 0o111))
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, BundleError):
            raise
        raise BundleError(f"not a readable .tar.gz: {exc}") from exc
    _require_test_script(tests_dir)


def check_archive(archive: bytes) -> None:
    """Refuse (``BundleError``) an archive that would not lay out as a verifier's ``tests/`` directory,
    by unpacking it once into a scratch directory, as every run will."""
    with tempfile.TemporaryDirectory(prefix="bb-archive-") as scratch:
        extract_archive(archive, Path(scratch) / "tests")


def _require_test_script(tests_dir: Path) -> None:
    script = tests_dir / TEST_SCRIPT
    if script.is_symlink() or not script.is_file():
        raise BundleError(f"the bundle has no tests/{TEST_SCRIPT}")


def write_submission(body: Mapping[str, Any], attachments: Mapping[str, bytes], directory: Path) -> None:
    """``content.txt``, ``submission.json`` and ``attachments/<fileName>`` into ``directory``."""
    directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    content = body.get("content")
    _write(directory, PurePosixPath("content.txt"), (content if isinstance(content, str) else "").encode())
    as_json = json.dumps(body, ensure_ascii=False, sort_keys=True, indent=2).encode()
    _write(directory, PurePosixPath("submission.json"), as_json)
    (directory / "attachments").mkdir(mode=0o755)
    for name, data in sorted(attachments.items()):
        path = _clean_path(name)
        if len(path.parts) != 1:
            raise BundleError(f"refused attachment name {name[:80]!r}: a file name, not a path")
        _write(directory / "attachments", path, data)


def tree_sha256(root: Path) -> str:
    """The tree hash of the regular files under ``root`` (see the module's docstring)."""
    lines = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = Path(directory) / name
            mode = path.lstat().st_mode
            if not stat.S_ISREG(mode):
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            relative = path.relative_to(root).as_posix()
            lines.append(f"{relative}\0{digest}\0{'x' if mode & 0o111 else '-'}\n")
    return hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()
