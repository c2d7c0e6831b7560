"""Which claims count in a track record, and when: a pure reading of a claim's stored state at a time.

For the claimant: an accepted submission (at its review), an upheld appeal (at its resolution).
Against: a rejection whose appeal was denied (at the resolution) or that was not appealed in its
window (at the review, once the window has closed or the task ended), a released claim (at its
release) and a claim whose TTL ran out (at its expiry). Not counted: what is still undecided (an
active claim, a submission awaiting review, an open appeal window or appeal), and a claim the task's
own end expired before its TTL ran out (the publisher's cancellation is not the bot's failure).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bountyboard.clock import as_utc_or_none
from bountyboard.market.models import ClaimStatus, ReviewState
from bountyboard.reputation.scoring import Outcome


@dataclass(frozen=True)
class ClaimFacts:
    """What the classification reads of a claim (one row of ``service.FACTS``)."""

    module: str
    status: ClaimStatus
    review_state: ReviewState
    holds_slot: bool
    reviewed_at: datetime | None
    appeal_deadline: datetime | None
    expires_at: datetime | None
    ended_at: datetime | None
    appeal_resolved_at: datetime | None


def outcome_of(claim: ClaimFacts, current: datetime) -> Outcome | None:
    """The claim's decided outcome at ``current``, or None while undecided or when it does not count."""
    reviewed, resolved, expires, ended, window = (as_utc_or_none(at) for at in (
        claim.reviewed_at, claim.appeal_resolved_at, claim.expires_at, claim.ended_at, claim.appeal_deadline))
    state = claim.review_state
    if claim.status == ClaimStatus.ACCEPTED:
        at = resolved if state == ReviewState.APPEAL_UPHELD and resolved else reviewed
        return Outcome(claim.module, True, at) if at else None
    if claim.status == ClaimStatus.REJECTED:
        if state == ReviewState.APPEAL_DENIED and resolved:
            return Outcome(claim.module, False, resolved)
        window_over = not claim.holds_slot or (window is not None and window <= current)
        if state == ReviewState.REJECTED and window_over and reviewed:
            return Outcome(claim.module, False, reviewed)
        return None
    if claim.status == ClaimStatus.RELEASED and ended:
        return Outcome(claim.module, False, ended)
    if claim.status == ClaimStatus.EXPIRED and expires and ended and expires <= ended:
        return Outcome(claim.module, False, expires)
    if claim.status == ClaimStatus.ACTIVE and expires and expires <= current:
        return Outcome(claim.module, False, expires)  # lapsed; the sweep has not recorded it yet
    return None
