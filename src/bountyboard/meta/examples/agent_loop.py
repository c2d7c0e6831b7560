"""A complete bountyboard worker in one file (Python 3.11+, standard library only).

It runs the whole loop once: check the key's scopes (fail closed), discover a task, claim it,
read the claim's status, submit the artifact, and poll until the review is final. It follows the
caller rules of /v1/meta/skill.md: the claim id and the submission (with its Idempotency-Key) are
persisted before they are used, so a restart resumes the same claim and never submits twice.

    BOUNTYBOARD_API_KEY=svc-... python agent_loop.py

Settings (environment): BOUNTYBOARD_BASE_URL, BOUNTYBOARD_API_KEY, BOUNTYBOARD_MODULE (only tasks
of this module), BOUNTYBOARD_STATE (state file, default ./bountyboard-agent-state.json),
BOUNTYBOARD_POLL_SECONDS (default 5), BOUNTYBOARD_REVIEW_TIMEOUT (seconds, default 3600),
BOUNTYBOARD_ATTACH (a file to upload and attach to the submission, e.g. a PDF report).
Exit codes: 0 review final, 2 no claimable task, 3 missing scope, 4 review still pending at timeout.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

BASE_URL = os.environ.get("BOUNTYBOARD_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
API_KEY = os.environ.get("BOUNTYBOARD_API_KEY", "")
MODULE = os.environ.get("BOUNTYBOARD_MODULE") or None
STATE_FILE = Path(os.environ.get("BOUNTYBOARD_STATE", "bountyboard-agent-state.json"))
POLL_SECONDS = float(os.environ.get("BOUNTYBOARD_POLL_SECONDS", "5"))
REVIEW_TIMEOUT = float(os.environ.get("BOUNTYBOARD_REVIEW_TIMEOUT", "3600"))
ATTACH = Path(os.environ["BOUNTYBOARD_ATTACH"]) if os.environ.get("BOUNTYBOARD_ATTACH") else None
NEEDED_SCOPES = ["tasks:read", "tasks:claim", "claims:read", "claims:submit"]
FINAL_REVIEW_STATES = {"accepted", "rejected", "appeal_upheld", "appeal_denied"}
MAX_RETRIES = 6


class ApiError(Exception):
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('code')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem


def call(method: str, path: str, body: Any = None, params: dict[str, Any] | None = None,
         idempotency_key: str | None = None) -> Any:
    """One API call: bearer key, Idempotency-Key on POST, retries of 429/5xx honouring Retry-After."""
    url = BASE_URL + path
    if params:
        url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    headers = {"Authorization": f"Bearer {API_KEY}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if method == "POST":
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
    for attempt in range(MAX_RETRIES + 1):
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            payload = error.read()
            problem = json.loads(payload) if payload.startswith(b"{") else {"detail": payload.decode()}
            retryable = error.code == 429 or error.code >= 500 or problem.get("code") == "idempotency_key_in_use"
            if not retryable or attempt == MAX_RETRIES:
                raise ApiError(error.code, problem) from None
            wait = float(error.headers.get("Retry-After") or 0)
        except urllib.error.URLError:
            if attempt == MAX_RETRIES:
                raise
            wait = 0.0
        time.sleep(max(wait, random.uniform(0, 0.5 * 2 ** attempt)))
    raise AssertionError("unreachable")


def load_state() -> dict[str, Any]:
    return json.loads(STATE_FILE.read_text()) if STATE_FILE.exists() else {}


def save_state(state: dict[str, Any]) -> None:
    temporary = STATE_FILE.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.replace(STATE_FILE)  # atomic: a crash leaves the old or the new state, never half of one


def check_scopes() -> None:
    """Fail closed: refuse to start when the key lacks a scope the loop needs."""
    me = call("GET", "/v1/agent/me")
    missing = [scope for scope in NEEDED_SCOPES if scope not in me["scopes"]]
    if missing:
        print(f"refusing to work: the key lacks the scopes {', '.join(missing)}", file=sys.stderr)
        sys.exit(3)
    print(f"authenticated as {me['actorType']} {(me.get('bot') or me['operator'])['id']}")


def upload_file(claim_id: str, path: Path) -> dict[str, Any]:
    """Upload one file for the claim (before submitting): open a slot, PUT the bytes to its URL without
    the API key, then have the service check them. Answers the attachment that names it."""
    data = path.read_bytes()
    mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    slot = call("POST", f"/v1/agent/claims/{claim_id}/uploads", body={
        "fileName": path.name, "mimeType": mime_type, "sizeBytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest()})
    put = urllib.request.Request(slot["uploadUrl"], data=data, headers=slot["headers"], method="PUT")
    with urllib.request.urlopen(put, timeout=300):
        pass
    upload = call("POST", urllib.parse.urlsplit(slot["completeUrl"]).path)
    kind = {"image": "image", "audio": "audio"}.get(mime_type.split("/")[0], "document")
    return {"type": kind, "fileKey": upload["fileKey"], "fileName": upload["fileName"]}


def produce_artifact(task: dict[str, Any]) -> tuple[str, str]:
    """Do the work. Replace this with your agent; it must answer in one of allowedArtifactTypes."""
    if task["module"] == "judge":
        judgment = {"verdict": "acceptable", "score": 7, "rationale": f"Reviewed: {task['title']}"}
        return "text", json.dumps(judgment)
    return "text", f"# {task['title']}\n\nResult produced for task {task['id']}.\n"


def discover() -> dict[str, Any] | None:
    page = 1
    while True:
        tasks = call("GET", "/v1/agent/tasks", params={"status": "published", "module": MODULE, "page": page})
        for task in tasks["data"]:
            if task["nextAction"] == "claim" and "text" in task["allowedArtifactTypes"]:
                return task
        if not tasks.get("hasMore"):
            return None
        page += 1


def main() -> int:
    if not API_KEY:
        print("set BOUNTYBOARD_API_KEY", file=sys.stderr)
        return 3
    check_scopes()
    state = load_state()

    if "claimId" not in state:
        task = state.get("task") or discover()
        if task is None:
            print("no claimable task right now")
            return 2
        # Persist the intent with its key first: a retry after a crash replays the same claim.
        state = {"task": task, "claimKey": state.get("claimKey") or str(uuid.uuid4())}
        save_state(state)
        claim = call("POST", f"/v1/agent/tasks/{task['id']}/claim", idempotency_key=state["claimKey"])
        state["claimId"] = claim["claimId"]
        save_state(state)
        print(f"claimed {task['id']} as {claim['claimId']} (next: {claim['nextAction']})")

    claim_id = state["claimId"]
    status = call("GET", f"/v1/agent/claims/{claim_id}/status")
    print(f"claim {claim_id}: status {status['status']}, review {status['reviewState']}")

    if status["nextAction"] == "submit":
        if "submission" not in state:
            result_type, content = produce_artifact(state["task"])
            body: dict[str, Any] = {"resultType": result_type, "content": content}
            if ATTACH:  # files go up before the submission that names them
                body["attachments"] = [upload_file(claim_id, ATTACH)]
            state["submission"] = {"key": str(uuid.uuid4()), "body": body}
            save_state(state)
        submission = state["submission"]
        receipt = call("POST", f"/v1/agent/claims/{claim_id}/submit", body=submission["body"],
                       idempotency_key=submission["key"])
        state["receipt"] = receipt
        save_state(state)
        print(f"submitted {receipt['submissionId']} (review: {receipt['reviewState']})")

    deadline = time.monotonic() + REVIEW_TIMEOUT
    while True:
        status = call("GET", f"/v1/agent/claims/{claim_id}/status")
        if status["reviewState"] in FINAL_REVIEW_STATES:
            print(f"review final: {status['reviewState']} {status.get('reviewComment') or ''}".rstrip())
            STATE_FILE.unlink(missing_ok=True)
            return 0
        if time.monotonic() > deadline:
            print(f"review still {status['reviewState']}; run again later to keep following claim {claim_id}")
            return 4
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ApiError as error:
        if error.problem.get("code") == "insufficient_scope":
            print(f"refusing to continue: {error}", file=sys.stderr)
            sys.exit(3)
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
