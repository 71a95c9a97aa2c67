"""The prefilter database compiles each parser's PREFILTER as its top-level alternatives, all
under the parser's id (pipeline/curate/scan.alternatives): Hyperscan compiles the pieces several
times faster than one alternation. A line must be hit exactly when the pattern would hit it:
these tests hold the pieces, searched with `re`, to the whole pattern on every fixture line and on
generated lines, and the block scan's hints to the whole patterns' superset.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gangscope.pipeline.curate import scan
from gangscope.pipeline.curate.substream import LINE_PARSERS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture_lines(limit_bytes: int = 2_000_000):
    for path in sorted(FIXTURES.rglob("*.log")) + sorted(FIXTURES.rglob("*.txt")):
        if path.stat().st_size > limit_bytes:
            continue
        yield from path.read_text("utf-8", errors="replace").splitlines()


def test_alternatives_split_at_the_top_level_and_open_whole_groups():
    assert scan.alternatives(r"a|b(?:c|d)|(?:e|(?:f|g))|[|]x|\|y") == ["a", "b(?:c|d)", "e", "f", "g", "[|]x", r"\|y"]


def test_a_group_that_is_not_the_whole_alternative_stays_whole():
    assert scan.alternatives(r"(?:a|b)+|(?:c)d(?:e)") == ["(?:a|b)+", "(?:c)d(?:e)"]


@pytest.mark.parametrize("pattern", [r"(?i)step|iter", r"(a)|\1b", r"(?P<x>a)|(?P=x)", r"(a|b", r"a|[b"])
def test_patterns_a_split_could_change_are_left_whole(pattern):
    assert scan.alternatives(pattern) == [pattern]


def test_the_parsers_prefilters_are_split():
    pieces = [scan.alternatives(scan.relax_anchors(c.PREFILTER)) for c in LINE_PARSERS]
    assert sum(map(len, pieces)) > 3 * len(LINE_PARSERS)  # else the tests below test nothing


@pytest.mark.parametrize("parser", LINE_PARSERS, ids=lambda c: c.__name__)
def test_the_pieces_of_each_parser_prefilter_hit_the_lines_the_pattern_hits(parser):
    pattern = scan.relax_anchors(parser.PREFILTER)  # as the scan compiles it
    whole = re.compile(pattern)
    pieces = [re.compile(p) for p in scan.alternatives(pattern)]
    rng = random.Random(19)
    lines = list(fixture_lines())
    alphabet = "".join(sorted({ch for line in lines[:5000] for ch in line}))
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(2000)]
    hit = 0
    for line in lines:
        expected = whole.search(line) is not None
        hit += expected
        assert any(p.search(line) for p in pieces) == expected, line
    assert hit  # the fixtures hold lines of every parser


def test_the_block_scan_hits_every_line_a_parser_prefilter_hits():
    scanner = scan.BlockScanner.build([c.PREFILTER for c in LINE_PARSERS])
    if scanner is None:
        pytest.skip("hyperscan is not installed")
    lines = [line for line in fixture_lines() if line.isascii() and line and "\x1c" not in line]
    block = "\n".join(f"2024-05-01T12:00:00.000000000Z stdout F {line}" for line in lines).encode()
    hints = scanner.candidates(block)
    pos = 0
    for line in lines:
        text = f"2024-05-01T12:00:00.000000000Z stdout F {line}"
        for i, parser in enumerate(LINE_PARSERS):
            if re.search(parser.PREFILTER, line):
                assert hints.get(pos, 0) & (1 << i), (parser.__name__, line)
        pos += len(text.encode()) + 1
