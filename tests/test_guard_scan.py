"""A dialect's guard is data (dialects.Guard: literals, a start, a test of a fixed place), so the
shape cache tests the guards of the whole table on a new segment with one Hyperscan pass for
their literals (dialects.GuardScan) instead of one substring search per dialect. These tests hold
the scan to the guards tested one by one, on every fixture line and on generated text made of the
literals themselves, non-ASCII and lone surrogates too, with and without Hyperscan.
"""

from __future__ import annotations

import random

import pytest

from gangscope.parsers import dialects
from gangscope.parsers.dialects import DIALECTS, Guard, GuardScan
from fixture_text import fixture_lines


def one_by_one(seg: str) -> list[str]:
    return [d.name for d in DIALECTS if d.guard(seg)]


def layout(seg: str) -> bytes:
    return seg.encode("utf-8", "surrogatepass").translate(dialects._DIGITS_TO_ZERO)


def scanned(scan: GuardScan, seg: str, data: bytes | None = None) -> list[str]:
    return [d.name for d in scan.passing(seg, data)]


def test_a_guard_needs_every_clause_one_literal_of_each():
    hf = Guard("{", ("'loss'", '"loss"'))
    assert hf("{'loss': 0.5}") and hf('{"loss": 0.5}')
    assert not hf("'loss': 0.5") and not hf("{'lr': 0.5}")


def test_a_guard_with_a_start_or_a_place_test():
    bar = Guard(" - ", starts="step ")
    assert bar("step 10/938 - loss: 0.5") and not bar(" step 10/938 - loss: 0.5") and not bar("step 10/938")
    header = Guard("Epoch ", where=lambda s: s.lstrip().startswith("Epoch "))
    assert header("  Epoch 1/3") and not header("x Epoch 1/3")
    assert header.literals() == {"Epoch "} and bar.literals() == {" - ", "step "}


def test_an_empty_segment_passes_a_guard_of_no_literal():
    ray_item = Guard(where=lambda s: s[:1] in "\u2502\u251c\u256d")  # as a block item's guard has it
    assert ray_item("") and ray_item("\u2502 loss 1 \u2502") and not ray_item("x")


def test_the_scan_of_a_json_log_line_lets_no_dialect_through():
    # the generic dialect's guard wants a step word and a tail a key/value list can end in: "}" is none
    seg = ('{"level": "info", "ts": 1714564800.0322888, "logger": "data.loader", "msg": "batch stats", "rank": 5, '
           '"step": 5, "extra": {"k0": "' + "x" * 2000 + '"}}')
    assert scanned(GuardScan(DIALECTS), seg, layout(seg)) == one_by_one(seg) == []
    assert scanned(GuardScan(DIALECTS), seg[:-2] + " loss 0.5", layout(seg[:-2] + " loss 0.5")) == ["generic"]


def fixture_segments() -> list[str]:
    out = []
    for line in fixture_lines():
        out.append(line)
        if "\r" in line:
            out.extend(line.split("\r"))
    return out


def test_every_fixture_line_passes_the_same_dialects():
    scan = GuardScan(DIALECTS)
    segments = fixture_segments()
    passed = 0
    for seg in segments:
        expected = one_by_one(seg)
        assert scanned(scan, seg, layout(seg)) == expected, seg
        assert scanned(scan, seg) == expected, seg
        passed += bool(expected)
    assert len(segments) > 10_000 and passed > 1_000


@pytest.mark.parametrize("seed", range(4))
def test_generated_text_of_the_literals_passes_the_same_dialects(seed):
    rng = random.Random(seed)
    scan = GuardScan(DIALECTS)
    pieces = sorted(scan.literals) + ["", " ", "  ", "\t", "x", "0", "7", "\u2502", "\u2501", "\ud800", "]", "\n"]
    for _ in range(20_000):
        seg = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert scanned(scan, seg, layout(seg)) == one_by_one(seg), repr(seg)


def test_without_hyperscan_the_literals_are_searched_one_by_one(monkeypatch):
    monkeypatch.setattr(dialects, "hyperscan", None)
    scan = GuardScan(DIALECTS)
    assert scan._database is None
    for seg in fixture_segments()[::7]:
        assert scanned(scan, seg) == one_by_one(seg), seg


def test_a_literal_with_a_digit_is_not_looked_for_in_the_layout():
    digits = dialects.Dialect(name="d", source="test", guard=Guard("v2 "), parse=lambda s: None)
    scan = GuardScan((digits,))
    assert not scan.layout_safe
    assert GuardScan(DIALECTS).layout_safe


def test_the_shape_cache_reads_what_it_read_before_on_fixture_steps():
    # the guards decide which dialect owns a new shape: the table's scan and one-by-one agree on readings
    cache, plain = dialects.ShapeCache(), dialects.ShapeCache()
    read = 0
    for seg in fixture_segments()[:40_000]:
        got = cache.read(seg)
        want = plain.read(seg, only=DIALECTS)  # `only`: the guards tested one by one
        assert (got and (got.dialect.name, list(got.texts))) == (want and (want.dialect.name, list(want.texts))), seg
        read += got is not None
    assert read > 500


def test_a_guard_given_as_a_plain_function_is_tested_as_it_is():
    mine = dialects.Dialect(name="mine", source="test", guard=lambda s: s.endswith(" ok"), parse=lambda s: None)
    scan = GuardScan((mine, *DIALECTS))
    assert [d.name for d in scan.passing("step=3 ok")][:2] == ["mine", "deepspeed"]
    assert "mine" not in [d.name for d in scan.passing("step=3 no")]
