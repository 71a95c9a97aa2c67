"""The error rules' own patterns in one Hyperscan prefilter scan (parsers/rule_literals.RuleFilter):
the rules it leaves out of a text's candidates are rules `re` finds no match for, on every fixture
line and on generated text made of what the rules look for; what `detect` finds is unchanged."""

from __future__ import annotations

import random

from gangscope.parsers import errors
from gangscope.parsers.rule_literals import RuleFilter, scan_safe
from fixture_text import fixture_lines
from rule_reference import reference_detect

RULES = errors.LINE_RULES


def rule_filter() -> RuleFilter:
    found = RuleFilter(RULES)
    assert found.patterns is not None
    return found


def missed(f: RuleFilter, text: str) -> list[str]:
    """The rules that match `text` (their key in it, where they have one) and are not candidates."""
    bits = f.mask(text)
    return [rule.name for i, rule in enumerate(RULES)
            if not bits >> i & 1 and (not rule.key or rule.key in text) and rule.pattern.search(text)]


def test_nearly_every_rule_is_in_the_scan():
    f = rule_filter()
    assert bin(f.unscanned).count("1") <= 5


def test_a_long_step_line_holding_rule_literals_leaves_no_rule_to_search():
    f = rule_filter()
    line = (" iteration       10/   20000 | consumed samples:         5120 | elapsed time per iteration (ms): 1000.1 | "
            "learning rate: 3.000000E-04 | global batch size:   512 | lm loss: 2.487501E+00 | loss scale: 65536.0 | "
            "grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    assert f._literal_mask(line)  # its literals alone send it to rules
    assert f.candidates(line) == []
    assert [r.name for r in f.candidates(line.replace("grad norm: 1.234", "grad norm: nan"))] == ["megatron_grad_norm_nonfinite"]
    assert f.candidates(line + " \u00e9") == [r for r in RULES if f._literal_mask(line) >> RULES.index(r) & 1]  # not ASCII: by literals


def test_no_rule_that_matches_a_fixture_line_is_left_out():
    f = rule_filter()
    judged = 0
    for line in fixture_lines():
        parts = line.split(" ", 3)
        text = parts[3] if len(parts) == 4 and parts[1] in ("stdout", "stderr") else line
        assert not missed(f, text), text
        judged += scan_safe(text)
    assert judged > 10_000


def test_no_rule_that_matches_generated_text_is_left_out():
    f = rule_filter()
    pieces = sorted({k for r in RULES if r.key for k in [r.key]} | {"nan", "inf", "NaN", "Loss", "loss", "grad norm", ": ", "=",
                     " ", "|", "[Rank 3] ", "[PG 0 Rank 1] ", "Error", "Exception", "exitcode: -9", "signal 9", "SIGKILL",
                     "CUDA", "out of memory", "NCCL", "0", "17", "(", ")", ":", "\t", "x", "_", "-", "/", "."})
    rng = random.Random(5)
    checked = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        assert not missed(f, text), repr(text)
        checked += bool(f._literal_mask(text))
    assert checked > 5_000


def test_detect_finds_what_every_rule_in_order_finds():
    rng = random.Random(9)
    lines = [t for t in fixture_lines() if t][:30_000]
    rng.shuffle(lines)
    for text in lines[:10_000]:
        expected = reference_detect(text)
        assert errors._detect(text) == expected, text
