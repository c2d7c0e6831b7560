"""Uploads over a live server, on each database with each storage (local directory, S3-compatible)."""

from __future__ import annotations

import httpx

from tests.files import samples
from tests.files.support import FileServer, ok_slot, open_slot, send, upload
from tests.market.support import Market, claim, eventually, expect_problem, ok, status, submit
from tests.support.api import Account, Admin, Bot

LIMIT = 300_000  # BOUNTYBOARD_UPLOAD_MAX_FILE_BYTES of these servers (conftest)
CLAIM_LIMIT = 700_000  # BOUNTYBOARD_UPLOAD_MAX_CLAIM_BYTES


def _worker(market: Market) -> tuple[Account, Bot, str, str]:
    """A publisher's funded arena task, claimed by a new operator's bot: (publisher, bot, task, claim)."""
    publisher = market.publisher(funds=100)
    task = market.task(publisher, "arena", bounty=10)
    bot = market.operator().bot()
    return publisher, bot, task["id"], claim(bot, task["id"])


def _files() -> dict[str, tuple[str, str, bytes]]:
    return {"image": ("drawing.png", "image/png", samples.png()),
            "document": ("report.pdf", "application/pdf", samples.pdf()),
            "audio": ("voice.wav", "audio/wav", samples.wav())}


def _download(reader: httpx.Client, file_key: str) -> httpx.Response:
    link = ok(reader.get(f"/v1/files/{file_key}/link"))
    return httpx.get(link["downloadUrl"], timeout=30)  # the signed link alone, no key


def test_reviewer_publisher_and_holder_get_the_same_bytes_and_nobody_else(
        files_server: FileServer, market: Market) -> None:
    publisher, bot, task_id, claim_id = _worker(market)
    keys = {kind: upload(bot.http, claim_id, name, mime, data)["fileKey"]
            for kind, (name, mime, data) in _files().items()}
    # The body's size and type of a file are not trusted: the stored ones are recorded.
    attachments = [{"type": kind, "fileKey": key, "mimeType": "text/plain", "sizeBytes": 1}
                   for kind, key in keys.items()]
    submit(bot, claim_id, {"resultType": "image", "attachments": attachments})

    recorded = ok(publisher.http.get(f"/v1/tasks/{task_id}/claims"))["data"][0]["submission"]["attachments"]
    for item in recorded:
        name, mime, data = _files()[item["type"]]
        assert (item["fileName"], item["mimeType"], item["sizeBytes"], item["sha256"]) == (
            name, mime, len(data), samples.sha256(data))

    reviewer = market.reviewer()
    for reader in (reviewer, publisher, bot):
        for kind, key in keys.items():
            name, mime, data = _files()[kind]
            answer = _download(reader.http, key)
            assert answer.status_code == 200, answer.text
            assert samples.sha256(answer.content) == samples.sha256(data)
            assert answer.headers["content-type"] == mime
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["content-security-policy"] == "sandbox; default-src 'none'"
            shown = "inline" if kind in ("image", "audio") else "attachment"
            assert answer.headers["content-disposition"].startswith(f'{shown}; filename="{name}"')

    # The holder of another claim, the operator of another bot, and anonymous callers: 404.
    _other_publisher, other_bot, _other_task, _other_claim = _worker(market)
    anonymous = httpx.Client(base_url=files_server.base_url, timeout=30)
    for outsider in (other_bot.http, other_bot.operator.http, anonymous):
        for key in keys.values():
            expect_problem(outsider.get(f"/v1/files/{key}/link"), 404, "not_found")
    # A link is good only as signed, and only for a while.
    link = ok(reviewer.http.get(f"/v1/files/{keys['image']}/link"))
    forged = link["downloadUrl"].replace(keys["image"], keys["document"])
    expect_problem(httpx.get(forged), 404, "not_found")
    expect_problem(anonymous.get(f"/v1/files/{keys['image']}/content", params={"expires": 9999999999,
                                                                                 "signature": "0" * 64}), 404,
                   "not_found")


def _nothing_left(files_server: FileServer, claim_id: str, before: set[str]) -> None:
    assert files_server.stored() == before
    assert files_server.upload_rows(claim_id) == []


def test_refusals_leave_nothing_behind(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    before = files_server.stored()

    # A PNG declared as a PDF.
    png = samples.png()
    slot = ok_slot(open_slot(bot.http, claim_id, "fake.pdf", "application/pdf", png))
    problem = expect_problem(send(bot.http, slot, png), 422, "type_mismatch")
    assert "image/png" in problem["detail"] and "application/pdf" in problem["detail"]
    _nothing_left(files_server, claim_id, before)

    # Over the per-file limit, declared up front; and more bytes than declared.
    expect_problem(open_slot(bot.http, claim_id, "big.wav", "audio/wav", b"\0" * (LIMIT + 1)), 422, "file_too_large")
    wav = samples.wav()
    slot = ok_slot(open_slot(bot.http, claim_id, "voice.wav", "audio/wav", wav[:-100], with_hash=False))
    expect_problem(send(bot.http, slot, wav), 422, "size_mismatch")
    _nothing_left(files_server, claim_id, before)

    # A hash that does not match the bytes.
    pdf = samples.pdf()
    slot_body = {"fileName": "r.pdf", "mimeType": "application/pdf", "sizeBytes": len(pdf),
                 "sha256": samples.sha256(b"other")}
    slot = ok_slot(bot.http.post(f"/v1/agent/claims/{claim_id}/uploads", json=slot_body))
    expect_problem(send(bot.http, slot, pdf), 422, "sha256_mismatch")
    _nothing_left(files_server, claim_id, before)

    # The fileKey of another claim.
    _p, other_bot, _t, other_claim = _worker(market)
    theirs = upload(other_bot.http, other_claim, "theirs.png", "image/png", png)["fileKey"]
    stored_now = files_server.stored()
    problem = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={
        "resultType": "image", "attachments": [{"type": "image", "fileKey": theirs}]}), 422, "invalid_attachment")
    assert problem["errors"][0]["field"] == "attachments.0.fileKey"
    assert status(bot, claim_id)["status"] == "active"
    assert [row["attached_at"] for row in files_server.upload_rows(other_claim)] == [None]
    assert files_server.stored() == stored_now

    # An image file cannot be a document attachment.
    mine = upload(bot.http, claim_id, "mine.png", "image/png", png)["fileKey"]
    expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={
        "resultType": "document", "attachments": [{"type": "document", "fileKey": mine}]}), 422, "invalid_attachment")

    # After the claim is submitted: no new slot, and a slot opened before takes no bytes.
    early = ok_slot(open_slot(bot.http, claim_id, "late.pdf", "application/pdf", pdf))
    submit(bot, claim_id, {"resultType": "image", "attachments": [{"type": "image", "fileKey": mine}]})
    stored_now = files_server.stored()
    expect_problem(open_slot(bot.http, claim_id, "late.pdf", "application/pdf", pdf), 409, "invalid_transition")
    late = send(bot.http, early, pdf)
    expect_problem(late, 409, "invalid_transition")
    assert files_server.stored() == stored_now
    assert [row["id"] for row in files_server.upload_rows(claim_id)] == [mine]


def test_only_the_holder_uploads_and_unused_uploads_are_swept(
        files_server: FileServer, market: Market, files_admin: Admin) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    png = samples.png()
    expect_problem(bot.operator.http.post(f"/v1/agent/claims/{claim_id}/uploads", json={
        "fileName": "a.png", "mimeType": "image/png", "sizeBytes": len(png)}), 403, "not_claim_holder")
    expect_problem(market.operator().http.post(f"/v1/agent/claims/{claim_id}/uploads", json={
        "fileName": "a.png", "mimeType": "image/png", "sizeBytes": len(png)}), 404, "not_found")

    unused = upload(bot.http, claim_id, "unused.png", "image/png", png)
    assert unused["status"] == "completed" and unused["expiresAt"]
    pending = ok_slot(open_slot(bot.http, claim_id, "never.png", "image/png", png))
    keys = {row["id"] for row in files_server.upload_rows(claim_id)}
    assert keys == {unused["fileKey"], pending["fileKey"]}
    assert any(unused["fileKey"] in key for key in files_server.stored())

    files_admin.advance_clock(601)  # past BOUNTYBOARD_UPLOAD_UNUSED_TTL_SECONDS and the slot's URL
    eventually(lambda: files_server.upload_rows(claim_id), [])
    assert not any(unused["fileKey"] in key for key in files_server.stored())


def test_the_files_of_one_claim_have_a_total_limit(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    for _ in range(2):  # slots count as soon as they are opened
        ok_slot(open_slot(bot.http, claim_id, "part.wav", "audio/wav", b"\0" * LIMIT, with_hash=False))
    over = b"\0" * (CLAIM_LIMIT - 2 * LIMIT + 1)
    problem = expect_problem(open_slot(bot.http, claim_id, "part.wav", "audio/wav", over, with_hash=False),
                             422, "claim_upload_limit")
    assert (problem["usedBytes"], problem["maxBytes"]) == (2 * LIMIT, CLAIM_LIMIT)
    assert [row["status"] for row in files_server.upload_rows(claim_id)] == ["pending", "pending"]
    ok_slot(open_slot(bot.http, claim_id, "part.wav", "audio/wav", over[:-1], with_hash=False))  # exactly the limit
