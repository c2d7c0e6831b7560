"""Who may subscribe to which kinds, and who is told of the review side of a claim.

Bot keys subscribe to the public kinds of their own claims. User keys of operators only to the final
signals (``claim.reviewed``, ``appeal.resolved``). User keys of publishers, reviewers and admins may
also subscribe to ``claim.submitted``, ``appeal.opened`` and ``review.due`` (DESIGN.md section 14),
and are told of them for their own tasks only: a publisher for the tasks it published, a reviewer
or an admin for the tasks it may review (every task, but never of its own claims). An operator's
user key hears nothing of the review side, not even of its own bots' claims.
"""

from __future__ import annotations

from sqlalchemy import and_, bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import Role
from bountyboard.events.kinds import OPERATOR_KINDS, PUBLIC_KINDS, REVIEW_SIDE_KINDS, EventKind
from bountyboard.events.models import WebhookEndpoint
from bountyboard.storage.unit_of_work import core

REVIEWING_ROLES = (Role.REVIEWER.value, Role.ADMIN.value)
TOLD_ROLES = (Role.PUBLISHER.value, *REVIEWING_ROLES)
REVIEW_SIDE = frozenset(kind.value for kind in REVIEW_SIDE_KINDS)
USER_KINDS_TOLD: tuple[EventKind, ...] = (*OPERATOR_KINDS, *REVIEW_SIDE_KINDS)


def kinds_for(bot_id: str | None, role: str | None) -> tuple[EventKind, ...]:
    """The kinds a subscription of this owner may name: a bot's, or a user's of this role."""
    if bot_id is not None:
        return PUBLIC_KINDS
    return USER_KINDS_TOLD if role in TOLD_ROLES else OPERATOR_KINDS


async def subscribable(session: AsyncSession, operator_id: str, bot_id: str | None) -> tuple[EventKind, ...]:
    role = None if bot_id is not None else await session.scalar(select(User.role).where(User.id == operator_id))
    return kinds_for(bot_id, role)


# The endpoints told of a review-side event: the claim's bot's own; the publisher's (user key); and
# those of reviewers and admins other than the claim's operator.
_TOLD = (
    select(WebhookEndpoint.id, WebhookEndpoint.events)
    .outerjoin(User, User.id == WebhookEndpoint.operator_id)
    .where(WebhookEndpoint.enabled.is_(True),
           or_(WebhookEndpoint.bot_id == bindparam("bot_id"),
               and_(WebhookEndpoint.bot_id.is_(None),
                    or_(WebhookEndpoint.operator_id == bindparam("publisher_id"),
                        and_(User.role.in_(REVIEWING_ROLES), User.disabled.is_(False),
                             WebhookEndpoint.operator_id != bindparam("operator_id"))))))
    .order_by(WebhookEndpoint.id)
)


async def review_side_subscribers(session: AsyncSession, type: str, bot_id: str | None, operator_id: str | None,
                                  publisher_id: str | None) -> list[str]:
    rows = await core(session, _TOLD, {"bot_id": bot_id, "publisher_id": publisher_id or "",
                                         "operator_id": operator_id or ""})
    return [endpoint_id for endpoint_id, kinds in rows if type in kinds]
