"""What the service promises about uploaded bytes (docs/security.md, Files): one request at a time per
slot, checked bytes that no URL can change and that are served only as checked, quiet aborted uploads,
limits on open slots, retention of rejected work, clean file names and size-bound presigned URLs."""

from __future__ import annotations

import socket
import time
import unicodedata
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3
import httpx
import pytest
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.files import samples
from tests.files.support import FileServer, ok_slot, open_slot, send, upload
from tests.market.support import Market, claim, eventually, expect_problem, ok, status, submit
from tests.support.api import Account, Admin, Bot

PENDING_PER_CLAIM = 4  # BOUNTYBOARD_UPLOAD_MAX_PENDING_PER_CLAIM of these servers (conftest)
PENDING_PER_KEY = 6  # BOUNTYBOARD_UPLOAD_MAX_PENDING_PER_KEY
RETENTION_DAYS = 2  # BOUNTYBOARD_REJECTED_FILE_RETENTION_DAYS


def _worker(market: Market, **bot_fields: Any) -> tuple[Account, Bot, str, str]:
    """A publisher's funded arena task, claimed by a new operator's bot: (publisher, bot, task, claim)."""
    publisher = market.publisher(funds=100)
    task = market.task(publisher, "arena", bounty=10)
    bot = market.operator().bot(**bot_fields)
    return publisher, bot, task["id"], claim(bot, task["id"])


def _download(reader: Account | Bot, file_key: str) -> httpx.Response:
    return httpx.get(ok(reader.http.get(f"/v1/files/{file_key}/link"))["downloadUrl"], timeout=30)


def _start_put(url: str, headers: dict[str, str], size: int, first: bytes) -> socket.socket:
    """A PUT of ``size`` bytes over a raw connection, of which only ``first`` is sent for now."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    head = [f"PUT {parts.path}?{parts.query} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {size}",
            "Connection: close", *(f"{name}: {value}" for name, value in headers.items())]
    sock.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + first)
    return sock


def _finish_put(sock: socket.socket, rest: bytes) -> tuple[int, bytes]:
    """Send the rest of the body; the answer's status and body."""
    sock.sendall(rest)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _row(files_server: FileServer, claim_id: str, file_key: str) -> dict[str, Any] | None:
    return next((row for row in files_server.upload_rows(claim_id) if row["id"] == file_key), None)


def _wait_until_taken(files_server: FileServer, claim_id: str, file_key: str) -> None:
    """Give the server time to start on a PUT: until the slot leaves pending, 5 s at most."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        row = _row(files_server, claim_id, file_key)
        if row is None or row["status"] != "pending":
            return
        time.sleep(0.05)


@pytest.mark.storage("local")
def test_overlapping_puts_to_one_upload_url_never_lose_the_bytes(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    wav = samples.wav()
    slot = ok_slot(open_slot(bot.http, claim_id, "voice.wav", "audio/wav", wav))
    slow = _start_put(slot["uploadUrl"], slot["headers"], len(wav), wav[:1000])  # a slow client...
    _wait_until_taken(files_server, claim_id, slot["fileKey"])

    # ... retries with the whole body: the slot is taken, and the retry changes nothing.
    retry = httpx.put(slot["uploadUrl"], content=wav, headers=slot["headers"], timeout=30)
    problem = expect_problem(retry, 409, "upload_in_progress")
    assert retry.headers["content-type"] == "application/problem+json"
    assert slot["fileKey"] in problem["detail"]

    code, body = _finish_put(slow, wav[1000:])
    assert code == 200, body
    # A PUT after completion is refused, and deletes nothing.
    expect_problem(httpx.put(slot["uploadUrl"], content=wav, headers=slot["headers"], timeout=30),
                   409, "upload_completed")
    submit(bot, claim_id, {"resultType": "audio", "attachments": [{"type": "audio", "fileKey": slot["fileKey"]}]})
    answer = _download(market.reviewer(), slot["fileKey"])
    assert answer.status_code == 200, answer.text
    assert answer.content == wav


@pytest.mark.storage("s3")
def test_a_still_valid_presigned_put_cannot_change_a_checked_file(files_server: FileServer, market: Market,
                                                                  files_admin: Admin) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    png = samples.png()
    slot = ok_slot(open_slot(bot.http, claim_id, "drawing.png", "image/png", png))
    assert send(bot.http, slot, png).status_code == 200
    submit(bot, claim_id, {"resultType": "image", "attachments": [{"type": "image", "fileKey": slot["fileKey"]}]})

    # The holder PUTs other bytes of the same size and type to the URL, which S3 still takes.
    other = bytearray(png)
    other[-5] ^= 0xFF
    replaced = httpx.put(slot["uploadUrl"], content=bytes(other), headers=slot["headers"], timeout=30)
    assert replaced.status_code == 200, replaced.text
    # Completing again changes nothing either.
    assert ok(bot.http.post(slot["completeUrl"]))["sha256"] == samples.sha256(png)

    reviewer = market.reviewer()
    answer = _download(reviewer, slot["fileKey"])
    assert answer.status_code == 200, answer.text
    assert answer.content == png
    recorded = ok(reviewer.http.get(f"/v1/files/{slot['fileKey']}/link"))["sha256"]
    assert samples.sha256(answer.content) == recorded

    # What the URL wrote is removed once the URL has expired (300 s on these servers); the file stays.
    def stored_of_upload() -> list[str]:
        return sorted(name.split("/")[0] for name in files_server.stored() if slot["fileKey"] in name)

    assert stored_of_upload() == ["files", "incoming"]
    files_admin.advance_clock(301)
    eventually(stored_of_upload, ["files"])
    assert _download(reviewer, slot["fileKey"]).content == png


def _overwrite(files_server: FileServer, key: str, data: bytes) -> None:
    """Change a stored object behind the service's back (a fault of the store, or of its operator)."""
    if files_server.storage == "local":
        (files_server.live.data_dir / "files" / key).write_bytes(data)
        return
    s3 = boto3.client("s3", endpoint_url=files_server.endpoint, aws_access_key_id="testing",
                      aws_secret_access_key="testing", region_name="us-east-1")
    s3.put_object(Bucket=files_server.bucket, Key=f"{files_server.prefix}/{key}", Body=data)


def test_downloads_never_serve_other_bytes_than_the_checked_ones(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    pdf = samples.pdf("Original")
    key = upload(bot.http, claim_id, "report.pdf", "application/pdf", pdf)["fileKey"]
    submit(bot, claim_id, {"resultType": "document", "attachments": [{"type": "document", "fileKey": key}]})
    [stored] = [name for name in files_server.stored() if key in name]
    reviewer = market.reviewer()
    assert _download(reviewer, key).content == pdf

    # Other bytes of another size: refused before anything is sent.
    _overwrite(files_server, stored, pdf + b"% appended\n")
    expect_problem(_download(reviewer, key), 409, "stored_file_mismatch")

    # Other bytes of the same size: the download breaks off before its last bytes.
    same_size = pdf.replace(b"Original", b"Replaced")
    assert len(same_size) == len(pdf)
    _overwrite(files_server, stored, same_size)
    try:
        received: bytes | None = _download(reviewer, key).content
    except httpx.HTTPError:
        received = None  # the connection was cut
    assert received is None or received != same_size


def test_a_malformed_link_signature_is_a_problem_not_a_500(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    key = upload(bot.http, claim_id, "drawing.png", "image/png", samples.png())["fileKey"]
    anonymous = httpx.Client(base_url=files_server.base_url, timeout=30)
    for signature in ("é" * 64, "Ā" * 10, "0" * 63 + "g", " "):
        query = {"expires": 9999999999, "signature": signature}
        for answer in (anonymous.get(f"/v1/files/{key}/content", params=query),
                       anonymous.put(f"/v1/uploads/{key}", params=query, content=b"x")):
            problem = expect_problem(answer, 422, "validation_failed")
            assert answer.headers["content-type"] == "application/problem+json"
            assert problem["errors"][0]["field"] == "signature"


def _server_log(files_server: FileServer) -> str:
    return files_server.live.log_path.read_text(errors="replace")


@pytest.mark.storage("local")
def test_an_aborted_upload_is_quiet_and_its_slot_stays_usable(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    wav = samples.wav()
    slot = ok_slot(open_slot(bot.http, claim_id, "voice.wav", "audio/wav", wav))
    log_before = len(_server_log(files_server))

    gone = _start_put(slot["uploadUrl"], slot["headers"], len(wav), wav[:1000])
    _wait_until_taken(files_server, claim_id, slot["fileKey"])
    gone.close()  # the client goes away mid-body
    eventually(lambda: (_row(files_server, claim_id, slot["fileKey"]) or {}).get("status") != "receiving", True,
               timeout=10)

    # The same URL takes the bytes afterwards, and nothing was logged as an error.
    done = httpx.put(slot["uploadUrl"], content=wav, headers=slot["headers"], timeout=30)
    logged = _server_log(files_server)[log_before:]
    assert "Traceback" not in logged and "unhandled error" not in logged, logged
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"


def test_open_upload_slots_are_limited_per_claim_and_per_key(files_server: FileServer, market: Market) -> None:
    publisher = market.publisher(funds=100)
    bot = market.operator().bot(maxActiveClaims=2)
    first, second = (claim(bot, market.task(publisher, "arena", bounty=10)["id"]) for _ in range(2))
    png = samples.png()
    slots = [ok_slot(open_slot(bot.http, first, "a.png", "image/png", png)) for _ in range(PENDING_PER_CLAIM)]
    refused = open_slot(bot.http, first, "a.png", "image/png", png)
    problem = expect_problem(refused, 429, "pending_upload_limit")
    assert (problem["limitScope"], problem["maxPending"]) == ("claim", PENDING_PER_CLAIM)
    assert 1 <= int(refused.headers["retry-after"]) <= 300  # the slots' URLs live 300 s on these servers

    # A completed upload no longer counts as open.
    assert send(bot.http, slots[0], png).status_code == 200
    ok_slot(open_slot(bot.http, first, "a.png", "image/png", png))

    # The key's open slots across its claims: 4 on the first, 2 more on the second.
    for _ in range(PENDING_PER_KEY - PENDING_PER_CLAIM):
        ok_slot(open_slot(bot.http, second, "b.png", "image/png", png))
    problem = expect_problem(open_slot(bot.http, second, "b.png", "image/png", png), 429, "pending_upload_limit")
    assert (problem["limitScope"], problem["maxPending"]) == ("apiKey", PENDING_PER_KEY)
    assert [row["status"] for row in files_server.upload_rows(second)] == ["pending"] * 2


def test_files_of_a_rejected_claim_are_deleted_after_their_retention_and_accepted_work_is_kept(
        files_server: FileServer, market: Market, files_admin: Admin) -> None:
    publisher = market.publisher(funds=100)
    task_id = market.task(publisher, "arena", bounty=10, maxClaims=2)["id"]
    bots = [market.operator().bot() for _ in range(2)]
    claims = [claim(bot, task_id) for bot in bots]
    keys = []
    for bot, claim_id in zip(bots, claims, strict=True):
        key = upload(bot.http, claim_id, "drawing.png", "image/png", samples.png())["fileKey"]
        submit(bot, claim_id, {"resultType": "image", "attachments": [{"type": "image", "fileKey": key}]})
        keys.append(key)
    accepted_key, rejected_key = keys
    reviewer = market.reviewer()
    ok(reviewer.http.post(f"/v1/review/claims/{claims[0]}", json={"decision": "accept", "comment": "good",
                                                                    "score": 0.9}))
    ok(reviewer.http.post(f"/v1/review/claims/{claims[1]}", json={"decision": "reject", "comment": "no"}))
    # While it may be appealed, and after an appeal is denied, the rejected work is still there.
    appeal = ok(bots[1].http.post(f"/v1/agent/claims/{claims[1]}/appeal", json={"reason": "please look again"}))
    files_admin.advance_clock(RETENTION_DAYS * 86400 + 60)
    assert _download(reviewer, rejected_key).content == samples.png()
    ok(market.reviewer().http.post(f"/v1/appeals/{appeal['id']}/resolve", json={"outcome": "denied", "comment": "no"}))
    assert status(bots[1], claims[1])["status"] == "rejected"

    files_admin.advance_clock(RETENTION_DAYS * 86400 - 3600)  # not yet
    time.sleep(1.5)  # three sweeps
    assert [row["id"] for row in files_server.upload_rows(claims[1])] == [rejected_key]

    files_admin.advance_clock(3600 + 60)
    eventually(lambda: files_server.upload_rows(claims[1]), [])
    assert not any(rejected_key in name for name in files_server.stored())
    expect_problem(reviewer.http.get(f"/v1/files/{rejected_key}/link"), 404, "not_found")
    # Accepted work is kept.
    assert _download(reviewer, accepted_key).content == samples.png()
    assert any(accepted_key in name for name in files_server.stored())


def test_file_names_are_nfc_and_invisible_characters_are_refused(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    png = samples.png()
    before = files_server.upload_rows(claim_id)
    for name in ("report\u202egnp.png", "draw\u200bing.png", "a\u2066b\u2069.png", "\ufeffdrawing.png"):
        problem = expect_problem(open_slot(bot.http, claim_id, name, "image/png", png), 422, "validation_failed")
        assert problem["errors"][0]["field"] == "fileName"
    assert files_server.upload_rows(claim_id) == before

    decomposed = "re\u0301sume\u0301.png"
    done = upload(bot.http, claim_id, decomposed, "image/png", png)
    assert done["fileName"] == unicodedata.normalize("NFC", decomposed) == "r\u00e9sum\u00e9.png"
    # A submission's own file name obeys the same rule.
    problem = expect_problem(bot.http.post(f"/v1/agent/claims/{claim_id}/submit", json={
        "resultType": "image", "attachments": [{"type": "image", "fileKey": done["fileKey"],
                                                "fileName": "x\u202e.png"}]}), 422, "validation_failed")
    assert problem["errors"][0]["field"] == "attachments.0.fileName"
    assert status(bot, claim_id)["status"] == "active"


def _signature_for(url: str, headers: dict[str, str]) -> str:
    """The SigV4 signature S3 computes for a PUT of ``url`` with these headers (botocore's signer, given the
    URL's own time and scope), to compare with the signature the URL carries."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    unsigned = parts._replace(query=urlencode({name: values[0] for name, values in query.items()
                                               if name != "X-Amz-Signature"})).geturl()
    signer = S3SigV4QueryAuth(Credentials("testing", "testing"), "s3", "us-east-1",
                              expires=int(query["X-Amz-Expires"][0]))
    request = AWSRequest(method="PUT", url=unsigned, headers={"Host": parts.netloc, **headers})
    request.context["timestamp"] = query["X-Amz-Date"][0]
    canonical = signer.canonical_request(request)
    return str(signer.signature(signer.string_to_sign(request, canonical), request))


@pytest.mark.storage("s3")
def test_presigned_puts_are_bound_to_the_declared_size(files_server: FileServer, market: Market) -> None:
    _publisher, bot, _task_id, claim_id = _worker(market)
    pdf = samples.pdf()
    slot = ok_slot(open_slot(bot.http, claim_id, "report.pdf", "application/pdf", pdf))
    query = parse_qs(urlsplit(slot["uploadUrl"]).query)
    assert query["X-Amz-SignedHeaders"] == ["content-length;content-type;host"]
    carried = query["X-Amz-Signature"][0]
    # S3 recomputes the signature from the request's headers: only the declared size matches it, so
    # S3 answers a bigger (or smaller) body with 403 SignatureDoesNotMatch before storing a byte.
    declared = {"Content-Type": "application/pdf", "Content-Length": str(len(pdf))}
    assert _signature_for(slot["uploadUrl"], declared) == carried
    for size in (len(pdf) + 1, len(pdf) * 1000, len(pdf) - 1):
        assert _signature_for(slot["uploadUrl"], {**declared, "Content-Length": str(size)}) != carried
    # The URL works for the declared body.
    assert send(bot.http, slot, pdf).status_code == 200
