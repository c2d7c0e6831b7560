"""The webhook delivery rules (events/delivery/policy.py): the retry schedule, Retry-After, disabling.

The expected values are written out here (DESIGN.md section 7), not read from the module."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bountyboard.events.delivery.policy import disable_reason, next_attempt_in, parse_retry_after, retry_delay


def low(a: float, _b: float) -> float:
    return a


def high(_a: float, b: float) -> float:
    return b


def middle(a: float, b: float) -> float:
    return (a + b) / 2


# Seconds after the 1st, 2nd, ... 9th failure: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
SCHEDULE = [(1, 5), (2, 300), (3, 1800), (4, 7200), (5, 18000), (6, 36000), (7, 50400), (8, 72000), (9, 86400)]


@pytest.mark.parametrize(("failures", "seconds"), SCHEDULE)
def test_the_schedule_without_jitter(failures: int, seconds: int) -> None:
    assert retry_delay(failures, uniform=middle) == pytest.approx(seconds)


@pytest.mark.parametrize(("failures", "shortest", "longest"), [(1, 4.5, 5.5), (2, 270, 330), (9, 77760, 95040)])
def test_jitter_is_ten_percent_either_way(failures: int, shortest: float, longest: float) -> None:
    assert retry_delay(failures, uniform=low) == pytest.approx(shortest)
    assert retry_delay(failures, uniform=high) == pytest.approx(longest)
    for _ in range(200):
        delay = retry_delay(failures)
        assert delay is not None and shortest <= delay <= longest


def test_the_time_scale_shrinks_the_schedule() -> None:
    assert retry_delay(1, 0.001, uniform=middle) == pytest.approx(0.005)
    assert retry_delay(3, 0.001, uniform=low) == pytest.approx(1.62)


@pytest.mark.parametrize("failures", [10, 11, 50])
def test_ten_attempts_then_no_more(failures: int) -> None:
    assert retry_delay(failures) is None


# Thursday 26 November 2026, 12:00:00 UTC, as a Unix time.
NOON = datetime(2026, 11, 26, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("header", "seconds"), [
    ("120", 120.0),
    (" 7 ", 7.0),
    ("0", 0.0),
    ("86400", 86400.0),
    ("90000", 86400.0),  # capped at a day
    ("Thu, 26 Nov 2026 12:10:00 GMT", 600.0),
    ("Thu, 26 Nov 2026 11:59:00 GMT", 0.0),  # in the past: at once
    ("Sat, 28 Nov 2026 12:00:00 GMT", 86400.0),  # two days ahead, capped
    (None, None),
    ("", None),
    ("soon", None),
    ("-5", None),
    ("1.5", None),
])
def test_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, at=NOON) == seconds


def test_retry_after_counts_from_now_unless_told() -> None:
    later = datetime.now(UTC) + timedelta(hours=1)
    parsed = parse_retry_after(later.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert parsed is not None and 3590 <= parsed <= 3600


@pytest.mark.parametrize(("attempt", "retry_after", "wait"), [
    (1, None, 5.0),
    (1, 60.0, 60.0),  # the receiver asks for longer: honoured
    (2, 60.0, 300.0),  # the schedule is longer: kept
    (2, 0.0, 300.0),
    (9, 3600.0, 86400.0),
    (10, 3600.0, None),  # the last attempt: no Retry-After brings another
])
def test_the_wait_before_a_failed_row_is_due_again(attempt: int, retry_after: float | None,
                                                   wait: float | None) -> None:
    assert next_attempt_in(attempt, refused=False, retry_after=retry_after, uniform=middle) == wait


def test_a_refused_destination_is_not_tried_again() -> None:
    assert next_attempt_in(1, refused=True, retry_after=None, uniform=middle) is None


QUEUED = datetime(2026, 11, 20, 8, tzinfo=UTC)
EXHAUSTED = ("Every attempt failed for 10 attempts over the whole retry schedule, with no successful "
             "delivery meanwhile.")


@pytest.mark.parametrize(("status_code", "refused", "error", "exhausted", "last_success_at", "reason"), [
    (500, False, "The endpoint answered 500.", False, None, None),  # retried, not judged
    (None, False, "ConnectError: refused", False, None, None),
    (410, False, "The endpoint answered 410.", False, None, "The endpoint answered 410 Gone."),
    (410, False, "The endpoint answered 410.", True, QUEUED + timedelta(days=1), "The endpoint answered 410 Gone."),
    (None, True, "The address 10.0.0.1 is private.", True, None, "The address 10.0.0.1 is private."),
    (None, True, None, True, None, "The destination is refused."),
    (None, True, "x" * 300, True, None, "x" * 200),  # cut to 200 characters
    (500, False, "The endpoint answered 500.", True, None, EXHAUSTED),  # never a success
    (500, False, "The endpoint answered 500.", True, QUEUED - timedelta(seconds=1), EXHAUSTED),  # none since
    (500, False, "The endpoint answered 500.", True, QUEUED, None),  # one at the same moment: still alive
    (500, False, "The endpoint answered 500.", True, QUEUED + timedelta(hours=3), None),  # one meanwhile
])
def test_when_a_failure_disables_its_endpoint(status_code: int | None, refused: bool, error: str | None,
                                              exhausted: bool, last_success_at: datetime | None,
                                              reason: str | None) -> None:
    assert disable_reason(status_code=status_code, refused=refused, error=error, exhausted=exhausted,
                          last_success_at=last_success_at, message_created_at=QUEUED) == reason
