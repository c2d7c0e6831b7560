"""Laying out a verifier's bundle and a submission on the host (checks/bundle.py): refused shapes."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bountyboard.checks import bundle
from bountyboard.checks.verifier import _parse_reward, _read_reward


def tar_gz(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


TEST_SH = (entry("tests/test.sh", mode=0o755), b"echo 1 > /logs/verifier/reward.txt\n")


def test_an_archive_and_the_same_files_inline_have_one_tree_hash(tmp_path: Path) -> None:
    bundle.extract_archive(tar_gz((entry("tests", tarfile.DIRTYPE), None), TEST_SH,
                                  (entry("tests/data/a.txt"), b"a")), tmp_path / "archived")
    bundle.write_inline({"test.sh": TEST_SH[1].decode(), "data/a.txt": "a"}, tmp_path / "inline")
    assert bundle.tree_sha256(tmp_path / "archived") == bundle.tree_sha256(tmp_path / "inline")
    assert (tmp_path / "archived" / "data" / "a.txt").read_bytes() == b"a"
    assert (tmp_path / "archived" / "test.sh").stat().st_mode & 0o777 == 0o755
    bundle.write_inline({"test.sh": "other"}, tmp_path / "changed")
    assert bundle.tree_sha256(tmp_path / "changed") != bundle.tree_sha256(tmp_path / "inline")


@pytest.mark.parametrize(("member", "message"), [
    ((entry("tests/../../escape.sh"), b"x"), "without '.' or '..'"),
    ((entry("/etc/passwd"), b"x"), "under tests/"),
    ((entry("other/test.sh"), b"x"), "under tests/"),
    ((entry("tests/link", tarfile.SYMTYPE, "/etc/passwd"), None), "only regular files"),
    ((entry("tests/hard", tarfile.LNKTYPE, "tests/test.sh"), None), "only regular files"),
    ((entry("tests/dev", tarfile.CHRTYPE), None), "only regular files"),
    ((entry("tests/fifo", tarfile.FIFOTYPE), None), "only regular files"),
    ((entry("tests/test.sh"), b"again"), "given twice"),
])
def test_unsafe_archive_entries_are_refused(tmp_path: Path, member: tuple[tarfile.TarInfo, bytes | None],
                                            message: str) -> None:
    with pytest.raises(bundle.BundleError, match=message.replace(".", r"\.")):
        bundle.extract_archive(tar_gz(TEST_SH, member), tmp_path / "tests")
    assert not (tmp_path.parent / "escape.sh").exists()


def test_a_gzip_bomb_stops_at_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_BUNDLE_BYTES", 1 << 20)
    with pytest.raises(bundle.BundleError, match="unpacks to more than"):
        bundle.extract_archive(tar_gz(TEST_SH, (entry("tests/zeros"), b"\0" * (2 << 20))), tmp_path / "tests")


@pytest.mark.parametrize(("archive", "message"), [(b"not gzip", "not a readable"),
                                                  (tar_gz((entry("tests/run.sh"), b"x")), "no tests/test.sh")])
def test_unreadable_or_incomplete_archives_are_refused(tmp_path: Path, archive: bytes, message: str) -> None:
    with pytest.raises(bundle.BundleError, match=message):
        bundle.extract_archive(archive, tmp_path / "tests")


@pytest.mark.parametrize("name", ["../x.sh", "/abs.sh", "a/../../b", "a\\b", "nul\0", ""])
def test_unsafe_inline_paths_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(bundle.BundleError):
        bundle.write_inline({"test.sh": "x", name: "y"}, tmp_path / "tests")


def test_the_submission_is_laid_out_as_the_verifier_reads_it(tmp_path: Path) -> None:
    body = {"resultType": "text", "content": "hi", "attachments": [{"fileName": "a.csv"}]}
    bundle.write_submission(body, {"a.csv": b"1,2"}, tmp_path / "sub")
    assert (tmp_path / "sub" / "content.txt").read_text() == "hi"
    assert '"resultType": "text"' in (tmp_path / "sub" / "submission.json").read_text()
    assert (tmp_path / "sub" / "attachments" / "a.csv").read_bytes() == b"1,2"
    with pytest.raises(bundle.BundleError, match="a file name, not a path"):
        bundle.write_submission(body, {"x/a.csv": b""}, tmp_path / "other")


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("reward.txt", "1\n", (1.0, None)), ("reward.txt", " 0.25 ", (0.25, None)),
    ("reward.txt", "nan", (None, "reward.txt holds no finite number")),
    ("reward.txt", "yes", (None, "reward.txt holds no number")),
    ("reward.json", '{"reward": 0.5, "speed": 3}', (0.5, None)), ("reward.json", '{"accuracy": 1}', (1.0, None)),
    ("reward.json", '{"a": 1, "b": 2}', (None, "reward.json has several keys and no 'reward'")),
    ("reward.json", "[1]", (None, "reward.json is not an object")),
])
def test_reward_files(name: str, text: str, expected: tuple[float | None, str | None]) -> None:
    assert _parse_reward(name, text) == expected


def test_a_reward_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("0.123")
    (tmp_path / "logs" / "verifier").mkdir(parents=True)
    (tmp_path / "logs" / "verifier" / "reward.txt").symlink_to(secret)
    assert _read_reward(tmp_path / "logs") == (None, "the verifier wrote no reward.txt or reward.json")
    (tmp_path / "logs" / "verifier" / "reward.txt").unlink()
    (tmp_path / "logs" / "verifier").rmdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "reward.txt").write_text("1")
    (tmp_path / "logs" / "verifier").symlink_to(tmp_path / "elsewhere")
    assert _read_reward(tmp_path / "logs") == (None, "no /logs/verifier directory")
