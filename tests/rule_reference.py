"""The error rules' answer as detect() gave it before any prefilter: every rule in order, its key
tested first. Fast paths (rule_literals.RuleFilter, its Hyperscan pattern scan) are held to it."""

from __future__ import annotations

import re

from gangscope.parsers import errors
from gangscope.parsers.lines import Line


def reference_detect(text: str):
    for rule in errors.LINE_RULES:
        if rule.key and rule.key not in text:
            continue
        m = rule.pattern.search(text)
        if m is not None:
            category = rule.classify(m) if rule.classify is not None else errors._category_of(rule, m)
            if category is None:
                continue
            return rule, category, errors._message(text, m, rule.match_only)
    return None


def found(line: str) -> tuple[str, str] | None:
    """(the rule's name, its category) that detect() gives a line, or None."""
    hit = errors.detect(line)
    return (hit[0].name, hit[1]) if hit is not None else None


#: The pipeline's cheap test of each line (errors.PREFILTER): a line a rule reads must pass it.
PREFILTER = re.compile(errors.PREFILTER)


def assert_found_past_the_prefilter(line: str, rule: str, category: str) -> None:
    """detect() gives the line to `rule` with `category`, and the pipeline's prefilter lets the line through."""
    assert found(line) == (rule, category)
    assert PREFILTER.search(line) is not None  # the pipeline's cheap test lets the line through


def category_of(line: str) -> str | None:
    """The category detect() gives a line, or None."""
    hit = errors.detect(line)
    return hit[1] if hit is not None else None


def detected(text: str) -> tuple[str, str] | None:
    """(rule name, category) the line detector (ErrorDetector, behind the line prefilter) gives one
    line, or None."""
    if not re.search(errors.PREFILTER, text):
        return None
    _consumed, records = errors.ErrorDetector().feed(Line("2026-12-04T03:12:44.104512000Z", 0, text))
    return (records[0].pattern, records[0].category) if records else None


def read_line(line: str) -> tuple[str, str] | None:
    """(rule, category) the pipeline's line parsers give `line` (ErrorDetector's or ToolExitDetector's prefilter first)."""
    from gangscope.parsers.errors import PREFILTER, detect
    from gangscope.parsers.tool_exits import TOOL_EXIT_PREFILTER

    if not (re.search(PREFILTER, line) or re.search(TOOL_EXIT_PREFILTER, line)):
        return None
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None
