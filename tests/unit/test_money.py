"""Money: amounts in currency units become integer cents exactly, or a 422 problem."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bountyboard.errors import Problem
from bountyboard.ledger.service import MAX_AMOUNT_CENTS, escrow_account, from_cents, to_cents, user_account


@pytest.mark.parametrize(("amount", "cents"), [
    ("0", 0), ("0.01", 1), ("10", 1000), ("10.5", 1050), ("19.99", 1999), (7, 700), (Decimal("3.10"), 310),
    ("100000000000", MAX_AMOUNT_CENTS),
])
def test_to_cents(amount: str | int | Decimal, cents: int) -> None:
    assert to_cents(amount) == cents


@pytest.mark.parametrize(("amount", "message"), [
    ("abc", "not a number"), ("0.001", "at most two decimal places"), ("NaN", "at most two decimal places"),
    ("Infinity", "at most two decimal places"), ("-1", "out of range"), ("100000000000.01", "out of range"),
])
def test_bad_amounts_are_refused(amount: str, message: str) -> None:
    with pytest.raises(Problem) as refused:
        to_cents(amount, "bountyAmount")
    assert (refused.value.status, refused.value.code) == (422, "invalid_request")
    assert refused.value.errors == [{"field": "bountyAmount", "message": message}]


@given(st.integers(0, MAX_AMOUNT_CENTS))
def test_cents_survive_the_round_trip_through_json_numbers(cents: int) -> None:
    assert to_cents(str(from_cents(cents))) == cents


def test_account_names() -> None:
    assert user_account("usr_1") == "user:usr_1"
    assert escrow_account("task_1") == "escrow:task_1"
