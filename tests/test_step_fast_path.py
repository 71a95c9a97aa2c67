"""A step line of a layout seen before takes a short path: its plan's written-out reader
(dialects.plan_reader) instead of apply_plan's loop, `ShapeCache.fields` instead of a Reading and
`build`, and for the dialects whose lines no other state of the stream touches
(steps._STRAIGHT_IDS) straight to the step being assembled. These tests hold each short path to
the plain one: the same fields, the same records, the same parser state."""

from __future__ import annotations

import random
import re
from contextlib import contextmanager

import msgspec
from dialect_plans import DIALECT_LOGS, fixture_plans, fixture_segments
from hypothesis import HealthCheck, given, settings, strategies as st

from fixture_text import fixture_lines
from gangscope.parsers import dialects, steps
from gangscope.parsers.dialects import GUARDS_FIRST_BYTES, ShapeCache, apply_plan, build
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.records import encode
from gangscope.parsers.steps import StepParser

PLANS = fixture_plans()
SEGMENTS = fixture_segments()
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
# value texts of every kind a converter meets, thousands separators left out (plan_reader's domain)
value_texts = st.text(alphabet="0123456789.-+:eEnaNIf ", max_size=12)


class PlainCache(ShapeCache):
    """The shape cache as it was: `fields` is `read` then `build`, for a known layout too."""

    def fields(self, seg: str):
        reading = self.read(seg)
        return None if reading is None else (reading.dialect, build(reading))


@contextmanager
def no_straight_route():
    """StepParser._segment with every dialect taking the long way through its tests."""
    kept = steps._STRAIGHT_IDS
    steps._STRAIGHT_IDS = frozenset()
    try:
        yield
    finally:
        steps._STRAIGHT_IDS = kept


def test_the_fixtures_give_plans_and_straight_dialects_of_many_kinds():
    assert len({d.name for d, _plan in PLANS}) >= 10
    straight = {d.name for d, _plan in PLANS if id(d) in steps._STRAIGHT_IDS}
    assert {"megatron", "deepspeed", "torchtitan", "hf_trainer"} <= straight
    assert {"generic", "tqdm", "keras", "lightning"}.isdisjoint(straight)


@settings(max_examples=800, deadline=None)
@given(st.data())
def test_a_plans_reader_gives_what_apply_plan_gives(data):
    d, plan = data.draw(st.sampled_from(PLANS))
    texts = data.draw(st.lists(value_texts, min_size=len(plan.ops), max_size=len(plan.ops)))
    expected = apply_plan(d, plan, texts)
    got = plan.read(tuple(texts))
    assert got == expected
    if got is not None:  # the same key order too: records and metrics are written in it
        assert list(got) == list(expected) and list(got["metrics"]) == list(expected["metrics"])


def _mutated(text: str, rnd: random.Random) -> str:
    """`text` with its numbers changed: digits redrawn (the same layout), a digit added or dropped
    (another layout), now and then a nan/inf or thousands separators where a number was."""

    def number(m: re.Match) -> str:
        digits = m.group(0)
        roll = rnd.random()
        if roll < 0.03:
            return rnd.choice(["nan", "inf", "-inf", "NAN", "1,234", "12,345.5"])
        if roll < 0.10:
            digits = digits + str(rnd.randint(0, 9))
        elif roll < 0.15 and len(digits) > 1:
            digits = digits[1:]
        return "".join(str(rnd.randint(0, 9)) if rnd.random() < 0.5 else c for c in digits)

    return re.sub(r"\d+", number, text)


@SETTINGS
@given(seed=st.integers(0, 2**32), rate=st.sampled_from([0.0, 0.3, 1.0]))
def test_a_known_layout_gives_the_fields_of_a_new_one(seed, rate):
    rnd = random.Random(seed)
    fast, slow = ShapeCache(), ShapeCache()
    for seg in SEGMENTS:
        if rnd.random() < rate:
            seg = _mutated(seg, rnd)
        slow._layouts.clear()  # every segment read through its tokens and shape, no layout remembered
        reading = slow.read(seg)
        expected = None if reading is None else (reading.dialect, build(reading))
        for _ in range(2):  # the second read of a segment is its layout's
            assert fast.fields(seg) == expected, seg


def _lines(rnd: random.Random, rate: float) -> list[tuple[str, Line]]:
    """The dialect fixtures' lines as a step parser gets them (per log, stream and rank), numbers
    mutated at `rate`."""
    out = []
    for n, path in enumerate(DIALECT_LOGS):
        seq = 0
        for raw in path.read_text("utf-8", errors="replace").splitlines():
            parts = raw.split(" ", 3)
            if len(parts) < 4:
                continue
            time, stream, _tag, text = parts
            if rnd.random() < rate:
                text = _mutated(text, rnd)
            text, rank, local_rank = strip_rank_prefixes(text)
            seq += 1
            out.append((f"{n}/{stream}/{rank}/{local_rank}", Line(time, seq, text, rank, local_rank)))
    return out


def _parse(lines: list[tuple[str, Line]], cache_type: type) -> tuple[list[bytes], list[bytes]]:
    """Every record of the streams, and every parser's snapshot before its close."""
    cache = cache_type()
    parsers: dict[str, StepParser] = {}
    records = []
    for key, line in lines:
        parser = parsers.get(key) or parsers.setdefault(key, StepParser(cache))
        _consumed, out = parser.feed(line)
        records.extend(out)
    states = [msgspec.msgpack.encode(p.snapshot()) for p in parsers.values()]
    for parser in parsers.values():
        records.extend(parser.close())
    return [encode(r) if isinstance(r, msgspec.Struct) and hasattr(r, "id") else msgspec.json.encode(r)
            for r in records], states


@SETTINGS
@given(seed=st.integers(0, 2**32), rate=st.sampled_from([0.0, 0.2, 1.0]))
def test_the_short_path_gives_the_records_and_state_of_the_plain_one(seed, rate):
    lines = _lines(random.Random(seed), rate)
    fast = _parse(lines, ShapeCache)
    with no_straight_route():
        plain = _parse(lines, PlainCache)
    assert fast[0] == plain[0]
    assert fast[1] == plain[1]
    assert len(fast[0]) > 100  # the fixtures' steps are there


def test_the_straight_route_keeps_out_the_dialects_that_read_the_streams_state():
    """The generic dialect takes its epoch from an "Epoch n/N" header before it: sent straight,
    its line would lose it."""
    assert id(dialects.GENERIC) not in steps._STRAIGHT_IDS
    parser = StepParser(ShapeCache())
    for text in ("Epoch 2/5", "step 3 loss 0.25", "step 4 loss 0.2"):
        _consumed, records = parser.feed(Line("2024-05-01T00:00:00Z", 0, text))
    records += parser.close()
    assert [(r.step, r.epoch) for r in records] == [(3, 2), (4, 2)]


def _redrawn(text: str, rnd: random.Random) -> str:
    """`text` with each ASCII digit redrawn: the same layout."""
    return re.sub(r"[0-9]", lambda m: str(rnd.randint(0, 9)), text)


def _verdicts(cache: ShapeCache, seg: str) -> tuple:
    return tuple(d.name for d in cache._guards.passing(seg)), tuple(d.guard(seg) for d in cache.dialects)


def test_a_guards_verdict_is_its_layouts():
    """What ShapeCache rests on (a layout remembered as read by nothing, a long segment's guards
    tested before its layout is made): no guard of the table tells one digit from another."""
    cache = ShapeCache()
    rnd = random.Random(19)
    tried = 0
    for text in fixture_lines():
        for seg in text.split("\r"):
            if any(c.isdigit() for c in seg):
                tried += 1
                assert _verdicts(cache, seg) == _verdicts(cache, _redrawn(seg, rnd)), seg
    assert tried > 10_000


def _json_line(step: int, pad: int) -> str:
    return ('{"level": "info", "ts": 1714564800.03, "msg": "batch stats", "step": %d, "extra": {"k0": "%s"}}'
            % (step, "x" * pad))


def test_a_long_segment_no_guard_holds_on_is_read_by_nothing_and_not_kept():
    cache = ShapeCache()
    for step in range(50):
        line = _json_line(step, GUARDS_FIRST_BYTES + step)
        assert cache.fields(line) is None and cache.read(line) is None
    assert cache._layouts == {}
    short = _json_line(3, 10)
    assert cache.fields(short) is None and len(cache._layouts) == 1  # a short one's layout is kept, as before


@SETTINGS
@given(seed=st.integers(0, 2**32))
def test_long_step_lines_read_as_short_ones_do(seed):
    """A Trainer dict of many metrics (over GUARDS_FIRST_BYTES): fields of its known layout as of a new one."""
    rnd = random.Random(seed)
    fast, slow = ShapeCache(), ShapeCache()
    for _ in range(20):
        metrics = ", ".join(f"'metric_{i}': {rnd.choice(['0.5', '12.25', '3e-05', 'nan'])}" for i in range(60))
        line = "{'loss': %s, 'grad_norm': 1.5, %s, 'epoch': 0.%d}" % (rnd.choice(["0.25", "1.5", "inf"]), metrics, rnd.randint(1, 99))
        assert len(line.encode()) >= GUARDS_FIRST_BYTES
        slow._layouts.clear()
        reading = slow.read(line)
        expected = (reading.dialect, build(reading))
        assert expected[1] is not None and expected[0] is dialects.HF_TRAINER
        assert fast.fields(line) == expected and fast.fields(line) == expected


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="0123456789:-+ _\u0663", min_size=0, max_size=7) | st.from_regex(r"-?\d{1,3}(:\d\d){1,2}", fullmatch=True))
def test_a_clock_of_two_parts_reads_as_the_loop_reads_it(text):
    """clock_seconds' short path ("MM:SS") gives the number or the error the loop over parts gives."""

    def outcome(read):
        try:
            return read(text)
        except ValueError:
            return ValueError

    assert outcome(dialects.clock_seconds) == outcome(dialects._clock_parts)
