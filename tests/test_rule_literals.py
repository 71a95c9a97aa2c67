"""The literal prefilter of a rule table (parsers/rule_literals.py) never hides a rule that matches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gangscope.parsers import errors
from gangscope.parsers.rule_literals import RuleFilter, required_literals
from rule_reference import reference_detect

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("pattern, expected", [
    (r"abc", {"abc"}),
    (r"x\d+ detected by watchdog", {" detected by watchdog"}),
    (r"(?:foo|barbaz) end", {" end"}),
    (r"(?P<a>No space left|Stale file) handle?", {"No space left", "Stale file"}),
    (r"(?:ab)+cde", {"cde"}),
    (r"a?b?", None),  # matches the empty string
    (r"(?:foo|\d+)", None),  # one branch without a literal
    (r"(?i)Error", None),  # case-insensitive: no literal proved
    (r"[A-Z]\w*", None),
    (r"x(?:foo)*", {"x"}),
])
def test_required_literals(pattern, expected):
    found = required_literals(re.compile(pattern))
    assert (None if found is None else set(found)) == expected


def _fixture_lines():
    lines = set()
    for path in sorted(FIXTURES.rglob("*.log")) + sorted(FIXTURES.rglob("*.txt")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            # CRI lines: the message after "time stream tag "
            parts = line.split(" ", 3)
            lines.add(parts[3] if len(parts) == 4 and parts[1] in ("stdout", "stderr") else line)
    return sorted(lines)


def test_detect_same_as_every_rule_on_fixture_lines():
    lines = _fixture_lines()
    assert len(lines) > 1000
    found = 0
    for text in lines:
        expected = reference_detect(text)
        assert errors.detect(text) == expected, text
        assert errors.detect(text) == expected, text  # the remembered answer too
        found += expected is not None
    assert found > 50


def test_the_scan_and_the_in_tests_agree():
    fast = RuleFilter(errors.LINE_RULES)
    slow = RuleFilter(errors.LINE_RULES)
    slow.database = None
    for text in _fixture_lines()[:3000] + ["ünïcødé Error: ß", "\udcff NVRM: Xid", ""]:
        assert fast.mask(text) == slow.mask(text), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([r.key for r in errors.LINE_RULES if r.key] + [
    "detected by watchdog at work: 12", "No space left on device", "Loss is nan", ", skipped=3, lr=",
    "RuntimeError: boom", "Traceback", "[Rank 3] ", "é", " ", "\t", "0"]), max_size=6).map("".join))
def test_detect_same_on_generated_lines(text):
    assert errors.detect(text) == reference_detect(text)
