"""``bountyboard status`` shows a claim's checks as one line, the failed rules and the verifier's output."""

from __future__ import annotations

from bountyboard.cli.tables import with_checks_summary

CHECKS = {"status": "failed", "binding": True,
          "rules": [{"kind": "contains", "passed": True, "message": "found 'Answer:'"},
                    {"kind": "maxLength", "passed": False, "message": "5100 characters (at most 5000)"}],
          "verifier": {"meanReward": 0.5, "interval": {"low": 0.1, "high": 0.9}, "trials": 2, "durationMs": 812,
                       "outputExcerpt": "expected 42, got 41\n"}}


def test_the_status_of_a_checked_claim_reads_in_one_line() -> None:
    shown = with_checks_summary({"id": "clm_1", "checks": CHECKS, "checkState": "failed"})
    assert shown["checks"] == ("failed (binding); rules 1/2 passed; verifier mean reward 0.5 [0.1, 0.9] "
                               "over 2 trial(s) in 812 ms")
    assert shown["failedRules"] == "maxLength: 5100 characters (at most 5000)"
    assert shown["checkOutput"] == "expected 42, got 41"
    assert shown["id"] == "clm_1" and shown["checkState"] == "failed"


def test_a_claim_without_checks_is_shown_as_it_is() -> None:
    record = {"id": "clm_1", "checks": None, "checkState": None}
    assert with_checks_summary(record) == {"id": "clm_1", "checkState": None}
