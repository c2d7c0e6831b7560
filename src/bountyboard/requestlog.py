"""Request ids (``X-Request-Id`` in and out), one access-log line per request, and the last-resort
answer to unexpected exceptions (logged with the request id, answered as a 500 problem without any
traceback).
"""

from __future__ import annotations

import logging
import re
import time

from starlette.types import Message, Receive, Scope, Send

from bountyboard.asgi import HTTPMiddleware, on_response_start, response_headers, with_headers
from bountyboard.config import get_settings
from bountyboard.errors import ErrorCode, request_id_var, send_problem
from bountyboard.ids import new_id

log = logging.getLogger("bountyboard.access")
error_log = logging.getLogger("bountyboard")
_ACCEPTED_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def configure_logging() -> None:
    """Log to stderr at ``BOUNTYBOARD_LOG_LEVEL`` (safe to call more than once)."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("bountyboard").setLevel(get_settings().log_level.upper())


class RequestIdMiddleware(HTTPMiddleware):
    """The outermost middleware: everything inside it, replays and errors included, has the id."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        incoming = next((value for name, value in scope["headers"] if name == b"x-request-id"), b"").decode("latin-1")
        # A caller's id is kept when it is a sane token, so one id can follow a request across services.
        request_id = incoming if _ACCEPTED_ID.match(incoming) else new_id("req")
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 0

        def add_id(message: Message) -> Message:
            nonlocal status
            status = message["status"]
            return with_headers(message, [*response_headers(scope), (b"x-request-id", request_id.encode())])

        send_with_id = on_response_start(send, add_id)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            error_log.exception("unhandled error request_id=%s %s %s", request_id, scope["method"], scope["path"])
            if status == 0:
                await send_problem(send_with_id, scope, 500, ErrorCode.INTERNAL_ERROR,
                                   "The server failed to answer this request. Quote the requestId when reporting it.")
        finally:
            log.info("%s %s %s %.1fms request_id=%s", scope["method"], scope["path"], status,
                     (time.perf_counter() - started) * 1000, request_id)
            request_id_var.reset(token)
