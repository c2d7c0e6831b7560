"""The SDK packs a verifier's tests/ directory as the service unpacks it (client/archive.py, checks/bundle.py)."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path

import pytest

from bountyboard.checks import bundle
from bountyboard.client.archive import pack_tests, verifier_archive


def _tests_dir(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (root / "test.sh").chmod(0o700)
    (root / "data" / "expected.txt").write_bytes(b"forty-two")
    (root / "data" / "expected.txt").chmod(0o600)
    return root


def test_the_packed_directory_unpacks_as_the_service_lays_it_out(tmp_path: Path) -> None:
    source = _tests_dir(tmp_path / "my-verifier")  # its own name does not matter: the archive's root is tests/
    archive = pack_tests(source)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        entries = [(info.name, info.mode, info.uid, info.uname, info.mtime) for info in tar]
    assert entries == [("tests", 0o755, 0, "", 0), ("tests/data", 0o755, 0, "", 0),
                       ("tests/test.sh", 0o755, 0, "", 0), ("tests/data/expected.txt", 0o644, 0, "", 0)]
    bundle.check_archive(archive)
    bundle.extract_archive(archive, tmp_path / "unpacked")
    assert bundle.tree_sha256(tmp_path / "unpacked") == bundle.tree_sha256(source)


def test_the_same_files_pack_to_the_same_bytes(tmp_path: Path) -> None:
    first = pack_tests(_tests_dir(tmp_path / "a"))
    second = _tests_dir(tmp_path / "b")
    os.utime(second / "test.sh", (0, 1_000_000))  # another time, another directory: the same archive
    assert hashlib.sha256(pack_tests(second)).hexdigest() == hashlib.sha256(first).hexdigest()


def test_a_tar_gz_is_sent_as_is_and_a_link_is_left_for_the_service_to_refuse(tmp_path: Path) -> None:
    packed = tmp_path / "verifier.tar.gz"
    packed.write_bytes(b"any bytes: the service judges them")
    assert verifier_archive(packed) == packed.read_bytes()
    linked = _tests_dir(tmp_path / "linked")
    (linked / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(bundle.BundleError, match="only regular files and directories"):
        bundle.check_archive(pack_tests(linked))
    with pytest.raises(NotADirectoryError):
        pack_tests(tmp_path / "missing")
