"""Payout rules: the arena's split by rank, with the rounding rest and unfilled places."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bountyboard.market.payouts import split_pot


@pytest.mark.parametrize(("pot", "split", "winners", "shares"), [
    (1000, [10_000], 1, [1000]),  # one place takes the pot
    (1000, [7000, 3000], 2, [700, 300]),
    (1000, [7000, 3000], 3, [700, 300]),  # a third winner is ranked but unpaid
    (1000, [7000, 3000], 1, [700]),  # second place unfilled: its share stays in escrow
    (1000, [7000, 3000], 0, []),
    (1001, [5000, 5000], 2, [501, 500]),  # the rounding rest goes to first place
    (100, [3333, 3333, 3334], 3, [34, 33, 33]),
    (100, [3333, 3333, 3334], 2, [33, 33]),  # not every place filled: no rest added
    (0, [6000, 4000], 2, [0, 0]),
])
def test_split(pot: int, split: list[int], winners: int, shares: list[int]) -> None:
    assert split_pot(pot, split, winners) == shares


@st.composite
def splits(draw: st.DrawFn) -> list[int]:
    """Shares in basis points, each above zero, adding up to 10000 (what task rules accept)."""
    cuts = sorted(draw(st.sets(st.integers(1, 9_999), max_size=5)))
    bounds = [0, *cuts, 10_000]
    return [high - low for low, high in pairwise(bounds)]


@given(pot=st.integers(0, 10**13), split=splits(), winners=st.integers(0, 8))
def test_no_money_is_created_and_a_full_podium_takes_it_all(pot: int, split: list[int], winners: int) -> None:
    shares = split_pot(pot, split, winners)
    assert len(shares) == min(winners, len(split))
    assert all(share >= 0 for share in shares)
    assert sum(shares) <= pot
    if winners >= len(split):
        assert sum(shares) == pot
    for rank, share in enumerate(shares[1:], start=1):
        assert share == pot * split[rank] // 10_000
