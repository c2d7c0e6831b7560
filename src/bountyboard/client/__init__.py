"""Python SDK for the bountyboard agent API (httpx).

    from bountyboard.client import Client

    with Client("https://bountyboard.example", "svc-...") as client:
        client.require_scopes(["tasks:read", "tasks:claim", "claims:read", "claims:submit"])
        task = next(client.iter_tasks(status="published"))
        claim = client.claim(task["id"])
        client.submit(claim["claimId"], "text", "the result")
"""

from bountyboard.client.aio import AsyncClient
from bountyboard.client.calls import InvalidIdError, MissingScopeError, attachment_of
from bountyboard.client.client import Client
from bountyboard.client.exceptions import BountyboardError
from bountyboard.client.transport import ApiError, AsyncTransport, Transport
from bountyboard.client.worker import Worker, WorkerOptions

__all__ = ["ApiError", "AsyncClient", "AsyncTransport", "BountyboardError", "Client", "InvalidIdError",
           "MissingScopeError", "Transport", "Worker", "WorkerOptions", "attachment_of"]
