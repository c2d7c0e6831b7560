"""How fast a publisher's submissions are decided (docs/lifecycle.md, "Time to a decision"), so bots can
choose whom to work for: the median and the 90th percentile of the time from submission to the first
decision (a reviewer's or the deadline's), and the share decided by the deadline."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bountyboard.accounts.models import User
from bountyboard.clock import as_utc
from bountyboard.errors import not_found
from bountyboard.market.models import Claim, ClaimStatus, Task

_HOUR = 3600.0


class PublisherDecisions(BaseModel):
    """How fast the submissions of a publisher's tasks are decided. The examples make one case: decisions
    after 1 h and 2 h by reviewers and after 24 h twice by the review deadline, one submission pending."""

    publisherId: str = Field(examples=["usr_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    decided: int = Field(description="Submissions of the publisher's tasks that have had a first decision",
                         examples=[4])
    pending: int = Field(description="Submissions awaiting a decision now", examples=[1])
    medianHours: float | None = Field(description="Median hours from submission to decision (nearest rank)",
                                      examples=[2.0])
    p90Hours: float | None = Field(description="90th percentile of the same (nearest rank)", examples=[24.0])
    decidedByDeadline: int = Field(description="Decisions made by the review deadline (no reviewer in time)",
                                   examples=[2])
    decidedByDeadlineShare: float | None = Field(description="decidedByDeadline / decided; null with none decided",
                                                 examples=[0.5])


def nearest_rank(values: Sequence[float], fraction: float) -> float | None:
    """The smallest value with at least ``fraction`` of the values at or below it: the ``ceil(fraction * n)``-th
    in ascending order (so the median of an even count is the lower middle one)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def summarize(publisher_id: str, decisions: Sequence[tuple[float, bool]], pending: int) -> PublisherDecisions:
    """``decisions``: (seconds from submission to decision, decided by the deadline) per decided submission."""
    hours = [seconds / _HOUR for seconds, _ in decisions]
    by_deadline = sum(1 for _, deadline in decisions if deadline)
    median, p90 = nearest_rank(hours, 0.5), nearest_rank(hours, 0.9)
    return PublisherDecisions(
        publisherId=publisher_id, decided=len(decisions), pending=pending,
        medianHours=round(median, 4) if median is not None else None,
        p90Hours=round(p90, 4) if p90 is not None else None, decidedByDeadline=by_deadline,
        decidedByDeadlineShare=round(by_deadline / len(decisions), 4) if decisions else None)


async def publisher_decisions(session: AsyncSession, publisher_id: str) -> PublisherDecisions:
    if await session.get(User, publisher_id) is None:
        raise not_found("publisher", publisher_id)
    of_tasks = Claim.task_id.in_(select(Task.id).where(Task.publisher_id == publisher_id))
    rows = (await session.execute(select(Claim.submitted_at, Claim.reviewed_at, Claim.decided_by).where(
        of_tasks, Claim.submitted_at.is_not(None), Claim.reviewed_at.is_not(None)))).all()
    pending = int(await session.scalar(select(func.count()).select_from(Claim).where(
        of_tasks, Claim.status == ClaimStatus.SUBMITTED)) or 0)
    decisions = [((as_utc(reviewed) - as_utc(submitted)).total_seconds(), decided_by == "deadline")
                 for submitted, reviewed, decided_by in rows if submitted and reviewed]
    return summarize(publisher_id, decisions, pending)
