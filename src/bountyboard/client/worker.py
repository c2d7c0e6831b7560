"""A crash-safe worker loop: claim one task, run a command on it, submit its output, follow review.

The loop is a small state machine whose current step is written to the state file before and
after every step (``idle -> claiming -> claimed -> submitting -> submitted -> idle``). Killed at any
instant and started again, it resumes the persisted step: a claim in flight is replayed with its
idempotency key, a claimed task is worked on again, and a submission in flight is replayed with
the same key and body, so the service never sees a second claim or a second submission.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from bountyboard.client import types as t
from bountyboard.client.client import Client
from bountyboard.client.exceptions import BountyboardError
from bountyboard.client.transport import ApiError
from bountyboard.contract.scopes import RECOMMENDED_WORKER_SCOPES

FINAL_REVIEW_STATES = frozenset({"accepted", "rejected", "appeal_upheld", "appeal_denied"})
REVIEW_EVENTS = ("claim.reviewed", "appeal.resolved")
# Refusals that mean "pick another task", not "stop working".
_CLAIM_REFUSALS = {404, 409, 422}


@dataclass
class WorkerOptions:
    command: str
    module: str | None = None
    result_type: str | None = None
    max_tasks: int | None = None
    idle_exit: bool = False
    wait_for_review: bool = True
    poll_interval: float = 5.0
    heartbeat_interval: float = 300.0
    command_timeout: float | None = None


class CommandFailed(BountyboardError):
    pass


class Worker:
    """Runs :class:`WorkerOptions.command` on one claimed task at a time, for ever or ``max_tasks`` times."""

    def __init__(self, client: Client, options: WorkerOptions, report: Callable[[str], None] = print,
                 busy: Callable[[str], AbstractContextManager[Any]] = nullcontext) -> None:
        self.client = client
        self.options = options
        self.report = report
        self.busy = busy  # shows progress while the command runs (a spinner in the CLI)
        self._skipped: set[str] = set()

    # Persisted step ------------------------------------------------------------------------------

    @property
    def step(self) -> dict[str, Any]:
        return dict(self.client.state.get("worker", {"phase": "idle"}))

    def _save(self, **step: Any) -> None:
        cursor = self.client.state.get("worker", {}).get("eventCursor")
        self.client.state.update(worker={"eventCursor": cursor, **step} if cursor else step)

    def _save_cursor(self, cursor: str | None) -> None:
        if cursor:
            self.client.state.update(worker={**self.step, "eventCursor": cursor})

    # The loop --------------------------------------------------------------------------------------

    def run(self) -> int:
        """Work until ``max_tasks`` tasks are done (or, with ``idle_exit``, none is left). Returns the count."""
        self.client.require_scopes(RECOMMENDED_WORKER_SCOPES, "agent run")
        done = 0
        while self.options.max_tasks is None or done < self.options.max_tasks:
            phase = self.step.get("phase", "idle")
            if phase == "idle":
                if self._adopt_active_claim():
                    continue
                task = self._next_task()
                if task is None:
                    if self.options.idle_exit:
                        break
                    time.sleep(self.options.poll_interval)
                    continue
                self._save(phase="claiming", task=task)
            elif phase == "claiming":
                self._claim()
            elif phase == "claimed":
                self._work()
            elif phase == "submitting":
                self._submit()
            elif phase == "submitted":
                if self.options.wait_for_review:
                    self._follow_review()
                else:
                    self.client.forget_claim(self.step["claimId"])
                    self._save(phase="idle")
                done += 1
            else:
                raise RuntimeError(f"unknown worker phase {phase!r} in {self.client.state.path}")
        return done

    def _next_task(self) -> t.Task | None:
        for task in self.client.iter_tasks(module=self.options.module, status="published"):
            if task["nextAction"] == "claim" and task["id"] not in self._skipped and self._result_type(task):
                return task
        return None

    def _adopt_active_claim(self) -> bool:
        """An active claim of this key that the state file does not know (lost or made elsewhere) is
        finished before anything new is claimed: one claim at a time."""
        active = self.client.list_claims(status="active")["data"]
        if not active:
            return False
        claim = active[0]
        task = self.client.get_task(claim["taskId"])
        self.report(f"resuming active claim {claim['id']} on task {task['id']}")
        self._save(phase="claimed", task=task, claimId=claim["id"])
        return True

    def _result_type(self, task: t.Task) -> str | None:
        allowed = task["allowedArtifactTypes"]
        if self.options.result_type:
            return self.options.result_type if self.options.result_type in allowed else None
        return "text" if "text" in allowed else (allowed[0] if allowed else None)

    def _claim(self) -> None:
        task = self.step["task"]
        try:
            created = self.client.claim(task["id"])
        except ApiError as error:
            if error.status not in _CLAIM_REFUSALS:
                raise
            self.report(f"could not claim {task['id']}: {error.detail}")
            self._skipped.add(task["id"])
            self._save(phase="idle")
            return
        self.report(f"claimed {task['id']} ({task['title']}) as {created['claimId']}")
        self._save(phase="claimed", task=task, claimId=created["claimId"])

    def _work(self) -> None:
        step = self.step
        task, claim_id = step["task"], step["claimId"]
        status = self.client.claim_status(claim_id)
        if status["nextAction"] != "submit":
            if status["reviewState"] == "not_submitted":  # released or expired
                self.report(f"claim {claim_id} is {status['status']}; it can no longer be worked on")
                self.client.forget_claim(claim_id)
                self._save(phase="idle")
            else:
                self._save(phase="submitted", task=task, claimId=claim_id)
            return
        result_type = self._result_type(task) or "text"
        try:
            content = self._run_command(task, claim_id, result_type)
        except CommandFailed as failure:
            self.report(f"the command failed on {task['id']}: {failure}; releasing claim {claim_id}")
            self._skipped.add(task["id"])
            try:
                self.client.release(claim_id)
            except ApiError as error:
                self.report(f"could not release {claim_id}: {error.detail}")
            self._save(phase="idle")
            return
        self._save(phase="submitting", task=task, claimId=claim_id,
                   submission={"resultType": result_type, "content": content})

    def _run_command(self, task: t.Task, claim_id: str, result_type: str) -> str:
        payload = json.dumps({**task, "claimId": claim_id, "resultType": result_type})
        env = {**os.environ, "BOUNTYBOARD_TASK_ID": task["id"], "BOUNTYBOARD_CLAIM_ID": claim_id,
               "BOUNTYBOARD_RESULT_TYPE": result_type, "BOUNTYBOARD_TASK_MODULE": task["module"]}
        env.pop("BOUNTYBOARD_API_KEY", None)  # the command does the work; it does not need the key
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(claim_id, stop), daemon=True)
        beat.start()
        try:
            with self.busy(f"running the command on {task['id']} ({task['title']})"):
                result = subprocess.run(self.options.command, shell=True, input=payload, capture_output=True,
                                        text=True, env=env, timeout=self.options.command_timeout)
        except subprocess.TimeoutExpired as error:
            raise CommandFailed(f"no answer within {self.options.command_timeout} s") from error
        finally:
            stop.set()
            beat.join()
        if result.returncode != 0:
            raise CommandFailed(f"exit status {result.returncode}: {result.stderr.strip()[-500:]}")
        content = result.stdout.rstrip()
        if not content:
            raise CommandFailed("it printed nothing")
        return content

    def _heartbeat(self, claim_id: str, stop: threading.Event) -> None:
        while not stop.wait(self.options.heartbeat_interval):
            try:
                self.client.heartbeat(claim_id)
            except ApiError:
                return

    def _submit(self) -> None:
        step = self.step
        claim_id, body = step["claimId"], step["submission"]
        try:
            receipt = self.client.submit(claim_id, body["resultType"], body.get("content"))
        except ApiError as error:
            if error.status != 409:
                raise
            # Recorded already (the first attempt's answer was lost with its idempotency key).
            status = self.client.claim_status(claim_id)
            if status["reviewState"] == "not_submitted":
                raise
            self.report(f"claim {claim_id} was already submitted")
        else:
            self.report(f"submitted {receipt['submissionId']} for claim {claim_id} (review {receipt['reviewState']})")
        self._save(phase="submitted", task=step["task"], claimId=claim_id)

    def _follow_review(self) -> None:
        """Wait for the claim's review through the events feed (the claim status confirms it)."""
        step = self.step
        claim_id = step["claimId"]
        cursor: str | None = step.get("eventCursor")
        checks = 0
        while True:
            seen = False
            for event, event_cursor in self.client.iter_events(after=cursor, types=REVIEW_EVENTS):
                cursor = event_cursor
                seen = seen or event["data"].get("claimId") == claim_id
            self._save_cursor(cursor)
            if seen or checks % 12 == 0:
                status = self.client.claim_status(claim_id)
                if status["reviewState"] in FINAL_REVIEW_STATES:
                    comment = status.get("reviewComment") or ""
                    self.report(f"claim {claim_id} reviewed: {status['reviewState']} {comment}".rstrip())
                    self.client.forget_claim(claim_id)
                    self._save(phase="idle")
                    return
            checks += 1
            time.sleep(self.options.poll_interval)
