"""What :class:`~bountyboard.client.Client` and :class:`~bountyboard.client.AsyncClient` share: one key's
crash-safe :class:`~.state.StateFile`, the :class:`~.operations.Operations` over it, and every public method.

Each method is one line naming its operation (:mod:`.methods`): the operation's parameters, result and
docstring are written once, in :mod:`.operations` or :mod:`.operator_operations`, and each client brings
the I/O that drives it (blocking or awaited) and its transport. Adding an operation is its generator and
its line here.
"""

from __future__ import annotations

from typing import Any

from bountyboard.client.methods import Method, StreamMethod
from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile


class BaseClient:
    """The methods of both clients, and the state they keep."""

    def __init__(self, state: StateFile, *, check_scopes: bool) -> None:
        self.state = state
        self._ops = Operations(state, check_scopes=check_scopes)

    def persisted_claims(self) -> dict[str, dict[str, Any]]:
        """Claims this key made through this state file: claim id -> {taskId, ...}."""
        return self._ops.persisted_claims()

    def forget_claim(self, claim_id: str) -> None:
        """Drop a claim (and its pending submission) from the state file; the service is not told."""
        self._ops.forget_claim(claim_id)

    # Identity
    me = Method(Operations.me)
    whoami = Method(Operations.whoami)
    reputation = Method(Operations.reputation)
    publisher_decisions = Method(Operations.publisher_decisions)
    require_scopes = Method(Operations.require_scopes)

    # Tasks and claims
    list_tasks = Method(Operations.list_tasks)
    iter_tasks = StreamMethod(Operations.iter_tasks)
    get_task = Method(Operations.get_task)
    claim = Method(Operations.claim)
    list_claims = Method(Operations.list_claims)
    claim_status = Method(Operations.claim_status)
    heartbeat = Method(Operations.heartbeat)
    release = Method(Operations.release)
    submit = Method(Operations.submit)
    upload = Method(Operations.upload)
    file_link = Method(Operations.file_link)
    appeal = Method(Operations.appeal)

    # Publishing and review
    publish_task = Method(Operations.publish_task)
    upload_verifier_archive = Method(Operations.upload_verifier_archive)
    review_queue = Method(Operations.review_queue)
    review = Method(Operations.review)
    balance = Method(Operations.balance)

    # Events
    events = Method(Operations.events)
    latest_cursor = Method(Operations.latest_cursor)
    iter_events = StreamMethod(Operations.iter_events)

    # The operator's bots, keys and webhooks
    bots = Method(Operations.bots)
    create_bot = Method(Operations.create_bot)
    keys = Method(Operations.keys)
    create_key = Method(Operations.create_key)
    revoke_key = Method(Operations.revoke_key)
    webhooks = Method(Operations.webhooks)
    create_webhook = Method(Operations.create_webhook)
    delete_webhook = Method(Operations.delete_webhook)
    rotate_webhook_secret = Method(Operations.rotate_webhook_secret)
    test_webhook = Method(Operations.test_webhook)
    webhook_deliveries = Method(Operations.webhook_deliveries)
