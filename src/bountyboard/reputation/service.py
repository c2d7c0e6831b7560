"""Track records read from the claims: a bot's, an operator's, and the overall ones of many bots at once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from bountyboard.accounts.models import Bot, User
from bountyboard.clock import as_utc_or_none, now, rfc3339
from bountyboard.config import get_settings
from bountyboard.errors import not_found
from bountyboard.market.eligibility import Standing
from bountyboard.market.models import Appeal, Claim, ClaimStatus, ReviewState, Task
from bountyboard.reputation.outcomes import ClaimFacts, outcome_of
from bountyboard.reputation.schemas import BotReputationDetail, OperatorReputationDetail, ReputationScore
from bountyboard.reputation.scoring import CONFIDENCE, Outcome, Score, score, scores

_DECIDABLE = (ClaimStatus.ACCEPTED, ClaimStatus.REJECTED, ClaimStatus.RELEASED, ClaimStatus.EXPIRED,
              ClaimStatus.ACTIVE)


def _facts(owner: ColumnElement[bool]) -> Select[*tuple[Any, ...]]:
    """The owner's claims that may count (one ``ClaimFacts`` row each, after their bot and operator)."""
    return (select(Claim.bot_id, Claim.operator_id, Task.module, Claim.status, Claim.review_state, Claim.holds_slot,
                   Claim.reviewed_at, Claim.appeal_deadline, Claim.expires_at, Claim.ended_at, Appeal.resolved_at)
            .join(Task, Task.id == Claim.task_id)
            .outerjoin(Appeal, Appeal.claim_id == Claim.id)
            .where(owner, Claim.status.in_(_DECIDABLE)))


async def _outcomes(session: AsyncSession, owner: ColumnElement[bool],
                    current: datetime) -> list[tuple[str | None, str, Outcome]]:
    """The outcomes of the owner's claims that count: (bot, operator, outcome) each."""
    rows = await session.execute(_facts(owner).where(
        or_(Claim.status != ClaimStatus.ACTIVE, and_(Claim.expires_at.is_not(None), Claim.expires_at <= current))))
    found = []
    for row in rows:
        outcome = outcome_of(ClaimFacts(*row[2:]), current)
        if outcome is not None:
            found.append((row[0], row[1], outcome))
    return found


def half_life_days() -> float:
    return get_settings().reputation_half_life_days


def score_out(value: Score) -> ReputationScore:
    return ReputationScore.of(value)


async def _track_record(session: AsyncSession, holder: ColumnElement[bool]) -> dict[str, Any]:
    """The fields a bot's and an operator's answers share, over the claims ``holder`` selects."""
    current = now()
    overall, per_module = scores((o for _, _, o in await _outcomes(session, holder, current)),
                                 current, half_life_days())
    return {"overall": score_out(overall),
            "byModule": {module: score_out(value) for module, value in per_module.items()},
            "halfLifeDays": half_life_days(), "confidence": CONFIDENCE, "asOf": rfc3339(current) or ""}


async def bot_reputation(session: AsyncSession, bot_id: str) -> BotReputationDetail:
    """A bot's track record, overall and per module (any caller with a valid key may read it)."""
    bot = await session.get(Bot, bot_id)
    if bot is None:
        raise not_found("bot", bot_id)
    return BotReputationDetail(botId=bot.id, name=bot.name, operatorId=bot.operator_id,
                               **await _track_record(session, Claim.bot_id == bot.id))


async def operator_reputation(session: AsyncSession, operator_id: str) -> OperatorReputationDetail:
    """An operator's track record: every claim of its bots and its own."""
    user = await session.get(User, operator_id)
    if user is None:
        raise not_found("operator", operator_id)
    return OperatorReputationDetail(operatorId=user.id, **await _track_record(session, Claim.operator_id == user.id))


async def overall_of_bots(session: AsyncSession, bot_ids: Sequence[str]) -> dict[str, ReputationScore]:
    """The overall track record of each of these bots (for pages that list claims of many bots)."""
    wanted = sorted(set(bot_ids))
    if not wanted:
        return {}
    current = now()
    grouped: dict[str, list[Outcome]] = defaultdict(list)
    for bot_id, _, outcome in await _outcomes(session, Claim.bot_id.in_(wanted), current):
        if bot_id is not None:
            grouped[bot_id].append(outcome)
    return {bot_id: score_out(score(grouped.get(bot_id, []), current, half_life_days())) for bot_id in wanted}


# The lower end of the interval moves with the decay alone: a kept standing is read again after this.
STANDING_REFRESH = timedelta(seconds=60)


# Built once for each kind of claimant (``market.service.holder_of``): a claim reads its claimant's
# standing under the task's lock.
_STANDING_FACTS = {column.key: _facts(column == bindparam("holder")) for column in (Claim.bot_id, Claim.operator_id)}


async def standing(session: AsyncSession, column: InstrumentedAttribute[Any], holder: str,
                   current: datetime) -> Standing:
    """What eligibility reads of the claimant whose claims have ``holder`` in ``column`` (market.eligibility),
    in one read under the claimant's lock: its outcomes, its active claims, and when time alone changes them
    (an active claim lapsing, a rejection's appeal window closing)."""
    outcomes: list[Outcome] = []
    active = 0
    changes = [current + STANDING_REFRESH]
    for row in await session.execute(_STANDING_FACTS[column.key], {"holder": holder}):
        facts = ClaimFacts(*row[2:])
        if (outcome := outcome_of(facts, current)) is not None:
            outcomes.append(outcome)
        expires, window = as_utc_or_none(facts.expires_at), as_utc_or_none(facts.appeal_deadline)
        if facts.status == ClaimStatus.ACTIVE and expires is not None and expires > current:
            active += 1
            changes.append(expires)
        if (facts.status == ClaimStatus.REJECTED and facts.review_state == ReviewState.REJECTED
                and window is not None and window > current):
            changes.append(window)
    record = score(outcomes, current, half_life_days())
    return Standing(low=record.low, completed=sum(o.success for o in outcomes), decided=len(outcomes),
                    active=active, until=min(changes))
