"""HTTP routes of events and webhooks (DESIGN.md section 7): parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from bountyboard.accounts.auth import Actor, require
from bountyboard.contract.pages import PAGE_SIZE_MAX
from bountyboard.contract.scopes import Scope
from bountyboard.errors import ErrorCode, invalid, problem_responses
from bountyboard.events import service, webhooks
from bountyboard.events.kinds import ALL_KINDS
from bountyboard.events.schemas import (
    DeliveryAttemptOut,
    DeliveryQueued,
    EventOut,
    WebhookCreate,
    WebhookOut,
    WebhookUpdate,
    WebhookWithSecret,
)
from bountyboard.events.service import Owner
from bountyboard.pagination import CursorPage, Page, Paging
from bountyboard.storage.session import ReadSession, WriteSession

Manager = Annotated[Actor, require(Scope.WEBHOOKS_MANAGE)]
Limit = Annotated[int, Query(ge=1, le=PAGE_SIZE_MAX, description="Items per page (at most 100).")]

router = APIRouter(prefix="/v1/agent", responses=problem_responses(401, 403, 422))


def _cursor(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 19 or int(value) >= 2**63:
        raise invalid(f"{name} must be a cursor returned as nextCursor by an earlier page.",
                      errors=[{"field": name, "message": "not a cursor"}], code=ErrorCode.INVALID_CURSOR)
    return int(value)


def _types(value: str | None) -> list[str] | None:
    if not value:
        return None
    kinds = [kind.strip() for kind in value.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in ALL_KINDS]
    if unknown:
        raise invalid(f"Unknown event types: {', '.join(unknown)}. Known: {', '.join(ALL_KINDS)}.",
                      errors=[{"field": "types", "message": f"unknown type {kind}"} for kind in unknown])
    return kinds


@router.get("/events", tags=["events"], summary="Poll events (the fallback to webhooks)",
            response_model=CursorPage[EventOut])
async def list_events(
    session: ReadSession,
    actor: Annotated[Actor, require(Scope.CLAIMS_READ)],
    after: Annotated[str | None, Query(description="nextCursor of the previous page; omit to start at the "
                                                   "oldest retained event.")] = None,
    types: Annotated[str | None, Query(description="Comma-separated event types, e.g. "
                                                   "claim.reviewed,appeal.resolved.")] = None,
    limit: Limit = 50,
    deliveryFailed: Annotated[bool, Query(description="Only events whose webhook delivery to one of the caller's "
                                                      "endpoints failed and has not succeeded since.")] = False,
) -> CursorPage[EventOut]:
    start = _cursor(after, "after") or 0
    events, more = await service.list_events(session, Owner.of(actor), after=start, types=_types(types),
                                             limit=limit, delivery_failed=deliveryFailed)
    # The cursor always moves to the last event returned, so a poller can keep asking from there.
    last = events[-1].sequence if events else start
    return CursorPage(data=[EventOut.of(event) for event in events], nextCursor=str(last), hasMore=more)


@router.get("/webhooks", tags=["webhooks"], summary="List webhook subscriptions",
            response_model=Page[WebhookOut])
async def list_webhooks(session: ReadSession, actor: Manager,
                        paging: Paging) -> Page[WebhookOut]:
    endpoints = await webhooks.list_endpoints(session, Owner.of(actor))  # an operator's few: paged in memory
    shown = endpoints[paging.offset:paging.offset + paging.pageSize]
    return Page.of([WebhookOut.model_validate(endpoint) for endpoint in shown], paging, len(endpoints))


@router.post("/webhooks", tags=["webhooks"], summary="Create a webhook subscription (the secret is shown once)",
             status_code=status.HTTP_201_CREATED, response_model=WebhookWithSecret, responses=problem_responses(409))
async def create_webhook(body: WebhookCreate, actor: Manager, session: WriteSession) -> WebhookWithSecret:
    endpoint = await webhooks.create_endpoint(session, Owner.of(actor), body.url, body.events, body.description)
    return WebhookWithSecret.model_validate(endpoint)


@router.get("/webhooks/{id}", tags=["webhooks"], summary="Get a webhook subscription", response_model=WebhookOut,
            responses=problem_responses(404))
async def get_webhook(id: str, session: ReadSession, actor: Manager) -> WebhookOut:
    return WebhookOut.model_validate(await webhooks.get_endpoint(session, Owner.of(actor), id))


@router.patch("/webhooks/{id}", tags=["webhooks"], summary="Change a webhook subscription (or re-enable it)",
              response_model=WebhookOut, responses=problem_responses(404))
async def update_webhook(id: str, body: WebhookUpdate, actor: Manager, session: WriteSession) -> WebhookOut:
    endpoint = await webhooks.update_endpoint(session, Owner.of(actor), id, url=body.url, events=body.events,
                                              description=body.description, enabled=body.enabled)
    return WebhookOut.model_validate(endpoint)


@router.delete("/webhooks/{id}", tags=["webhooks"], summary="Delete a webhook subscription and its queue",
               response_model=WebhookOut, responses=problem_responses(404))
async def delete_webhook(id: str, actor: Manager, session: WriteSession) -> WebhookOut:
    return WebhookOut.model_validate(await webhooks.delete_endpoint(session, Owner.of(actor), id))


@router.post("/webhooks/{id}/rotate-secret", tags=["webhooks"],
             summary="Rotate the signing secret (the old one keeps signing for 24 h)",
             response_model=WebhookWithSecret, responses=problem_responses(404))
async def rotate_webhook_secret(id: str, actor: Manager, session: WriteSession) -> WebhookWithSecret:
    return WebhookWithSecret.model_validate(await webhooks.rotate_secret(session, Owner.of(actor), id))


@router.post("/webhooks/{id}/test", tags=["webhooks"], summary="Send a webhook.test event to this endpoint",
             response_model=EventOut, responses=problem_responses(404, 409))
async def test_webhook(id: str, actor: Manager, session: WriteSession) -> EventOut:
    return EventOut.of(await webhooks.send_test_event(session, Owner.of(actor), id))


@router.get("/webhooks/{id}/deliveries", tags=["webhooks"], summary="Delivery attempts, newest first",
            response_model=CursorPage[DeliveryAttemptOut], responses=problem_responses(404))
async def list_deliveries(
    id: str, session: ReadSession, actor: Manager,
    after: Annotated[str | None, Query(description="nextCursor of the previous page.")] = None,
    eventId: Annotated[str | None, Query(max_length=40, description="Only attempts of this event.")] = None,
    limit: Limit = 50,
) -> CursorPage[DeliveryAttemptOut]:
    attempts, more = await webhooks.list_attempts(session, Owner.of(actor), id, before=_cursor(after, "after"),
                                                  limit=limit, event_id=eventId)
    return CursorPage(data=[DeliveryAttemptOut.of(a) for a in attempts],
                      nextCursor=str(attempts[-1].seq) if more else None, hasMore=more)


@router.post("/webhooks/{id}/deliveries/{dlv}/redeliver", tags=["webhooks"],
             summary="Send an attempt's event to this endpoint again", response_model=DeliveryQueued,
             responses=problem_responses(404, 409))
async def redeliver(id: str, dlv: str, actor: Manager, session: WriteSession) -> DeliveryQueued:
    message, event_id = await webhooks.redeliver(session, Owner.of(actor), id, dlv)
    return DeliveryQueued.of(message, event_id)

