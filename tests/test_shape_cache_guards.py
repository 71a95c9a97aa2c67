"""The shape cache judges the dialects' guards per layout: a segment no guard holds on is read by
nothing, and it changes nothing for the segments read after it (parsers/dialects.ShapeCache)."""

from __future__ import annotations

import json

from hypothesis import example, given, settings, strategies as st

from gangscope.parsers.dialects import DIALECTS, ShapeCache, build


def _guarded(seg: str) -> bool:
    """Whether some dialect's guard holds on the segment (the plain test, guard by guard)."""
    return any(d.guard(seg) for d in DIALECTS)


def _read(cache: ShapeCache, seg: str):
    reading = cache.read(seg)
    return None if reading is None else (reading.dialect.name, reading.texts, reading.nonfinite, build(reading))


_NUMBER = st.one_of(st.integers(0, 10**6).map(str), st.floats(0, 100, allow_nan=False).map(lambda x: f"{x:.4f}"),
                    st.sampled_from(["nan", "inf", "-1", ".5", "1e-05"]))
_PAD = st.integers(0, 7).map(lambda n: " " * n)
# step lines as plain loops print them, numbers padded or not ("step {step:>6}"), and lines a
# step prefilter hits that are no step: JSON log records with a step key, prose
_STEP_LIKE = st.builds(lambda word, sep, pad, n, key, sep2, x: f"{word}{sep}{pad}{n} {key}{sep2}{x}",
                       st.sampled_from(["step", "Step", "iter", "iteration", "global_step", "batch", "epoch"]),
                       st.sampled_from(["", ":", "=", " "]), _PAD, _NUMBER,
                       st.sampled_from(["loss", "lr", "| loss", "train_loss"]), st.sampled_from([" ", ": ", "=", ":"]), _NUMBER)
_JSON_LOG = st.builds(lambda n, msg, extra: json.dumps({"level": "info", "step": n, "msg": msg, "extra": extra}),
                      st.integers(0, 10**5), st.text(max_size=30), st.dictionaries(st.sampled_from(["k1", "k2", "loss"]), _NUMBER))
_PROSE = st.builds(lambda n, pad: f"saved checkpoint at step{pad}{n} to /ckpt/{n}", st.integers(0, 10**5), _PAD)
_BAR = st.builds(lambda n, total, rate: f"{100 * n // total:3d}%|{'#' * (10 * n // total):<10}| {n}/{total} [00:01<00:09, {rate}it/s]",
                 st.integers(0, 500), st.just(500), st.sampled_from(["1.00", "12.3", "3.45"]))
SEGMENTS = st.lists(st.one_of(_STEP_LIKE, _JSON_LOG, _PROSE, _BAR), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(segments=SEGMENTS)
@example(segments=["step 5 loss 1.0", "step    5 loss 1.0"])  # one shape; the second fails the generic guard
def test_a_segment_no_guard_holds_on_is_read_by_nothing_whatever_came_before(segments):
    cache = ShapeCache()
    for seg in segments:
        reading = _read(cache, seg)
        if not _guarded(seg):
            assert reading is None, seg


@settings(max_examples=300, deadline=None)
@given(segments=SEGMENTS)
def test_what_a_guarded_segment_reads_does_not_depend_on_the_unguarded_ones_before_it(segments):
    """The cache read with every segment, and with only the segments some guard holds on: those
    read alike. (Before the guards were judged per layout, an unguarded segment made its shape
    a remembered miss, and the guarded segments of that shape after it read as nothing.)"""
    everything, guarded_only = ShapeCache(), ShapeCache()
    for seg in segments:
        reading = _read(everything, seg)
        if _guarded(seg):
            assert reading == _read(guarded_only, seg), seg


def test_right_aligned_step_numbers_past_the_guards_reach_are_read_in_the_order_printed():
    """`print(f"step {step:>6} loss {loss}")`: the generic guard allows three characters between the
    step word and its number, so steps under 1000 are no step lines for it; the later ones are."""
    cache = ShapeCache()
    read = [_read(cache, f"step {step:>6} loss 0.5") for step in (1, 12, 123, 1234, 12345)]
    assert [r is not None for r in read] == [False, False, False, True, True]
    assert read[3][1] == ["1234", "0.5"] and read[4][1] == ["12345", "0.5"]


def test_json_log_lines_with_a_step_key_are_read_by_nothing_and_fill_no_shape_table():
    """Each such line is a new layout and shape (its strings vary in length): none is tokenized or
    remembered by shape, so they do not push the step lines' shapes out of the bounded table."""
    cache = ShapeCache()
    for n in range(200):
        seg = json.dumps({"level": "info", "step": n, "msg": "batch stats", "extra": {"k": "x" * n}})
        assert cache.read(seg) is None
    assert len(cache._shapes) == 0
    assert cache.read("step 5 loss 1.25") is not None
