"""The review page's checks of a submission: each rule passed or failed, the verifier's mean reward
with its interval, trials, duration and the end of its output (issue 26)."""

from __future__ import annotations

import re

import pytest

from bountyboard.site.render import build_environment

pytestmark = pytest.mark.in_process

CHECKS = {
    "status": "failed", "binding": True,
    "rules": [{"kind": "contains", "passed": True, "message": "found 'Answer:'"},
              {"kind": "maxLength", "passed": False, "message": "5100 characters (at most 5000)"}],
    "verifier": {"status": "failed", "passed": False, "meanReward": 0.5, "interval": {"low": 0.0945, "high": 0.905},
                 "passThreshold": 1.0, "trials": 4, "durationMs": 812, "outputExcerpt": "expected 42, got <41>"},
}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_the_checks_of_a_submission_show_each_rule_and_the_verifier() -> None:
    html = build_environment().get_template("partials/checks.html").render(checks=CHECKS)
    text = _text(html)
    assert "Checks: failed" in text and "binding" in text
    assert "contains pass found &#39;Answer:&#39;" in text
    assert "maxLength fail 5100 characters (at most 5000)" in text
    assert "mean reward 0.5 (95% interval 0.0945 to 0.905)" in text
    assert "4 trial(s) · 812 ms" in text and "threshold 1.0" in text
    assert "expected 42, got &lt;41&gt;" in html  # the verifier's output is escaped


def test_an_advisory_check_without_a_verifier_shows_its_rules_only() -> None:
    checks = {"status": "passed", "binding": False, "verifier": None,
              "rules": [{"kind": "regex", "passed": True, "message": "matched"}]}
    text = _text(build_environment().get_template("partials/checks.html").render(checks=checks))
    assert "Checks: passed" in text and "advisory" in text and "regex pass matched" in text
    assert "Verifier" not in text
