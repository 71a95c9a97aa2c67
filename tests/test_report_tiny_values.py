"""A chart of values near the end of the floats (a loss of 1e-310, -6.9e-307) is drawn, and fast.

Before: nice_ticks rounded every tick to 12 decimals, so a span under 1e-12 gave ticks that never
passed the top (an endless loop: the replay hung in its report), and a span of 1e-308 gave two
ticks of 0.0 (line_chart divided by zero, the job's report section lost); a span whose power of
ten underflows (5e-324) raised from math.log10."""

import math
import multiprocessing

import pytest
from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import StepRecord
from gangscope.pipeline.report import render


def _ticks_in_child(lo, hi, out):
    out.put(render.nice_ticks(lo, hi))


def _bounded(lo, hi, seconds=10.0):
    """nice_ticks(lo, hi) run in a child process, so a loop that never ends fails the test."""
    queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_ticks_in_child, args=(lo, hi, queue))
    child.start()
    child.join(seconds)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"nice_ticks({lo!r}, {hi!r}) did not return within {seconds} s")
    assert child.exitcode == 0, f"nice_ticks({lo!r}, {hi!r}) raised"
    return queue.get(timeout=5)


@pytest.mark.parametrize("lo,hi", [(0.0, 1e-310), (1e-320, 3e-320), (5e-324, 1e-323), (-6.9e-307, -6.8e-307),
                                   (-6.9e-307, -6.9e-307), (0.0, 1e-13), (1e-15, 2e-15)])
def test_ticks_of_tiny_spans_end_and_cover_the_values(lo, hi):
    ticks = _bounded(lo, hi)
    assert len(ticks) >= 2
    assert ticks[0] <= lo and ticks[-1] >= hi
    assert ticks[-1] > ticks[0]
    assert all(b > a for a, b in zip(ticks, ticks[1:]))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
       st.floats(min_value=0.0, max_value=1e3, allow_nan=False))
def test_ticks_always_cover_and_increase(lo, width):
    hi = lo + width
    ticks = render.nice_ticks(lo, hi)
    assert 2 <= len(ticks) <= 4 * 5 + 5
    assert ticks[-1] > ticks[0]
    slack = (ticks[1] - ticks[0]) * 1e-6 + abs(lo) * 1e-12  # floor() is given 1e-9 of a step
    assert ticks[0] <= lo + slack and ticks[-1] >= hi - slack - abs(hi) * 1e-12


def test_a_chart_of_a_loss_near_zero_is_drawn():
    steps = [StepRecord(id=f"s{i}", job="j", attempt=1, pod="p", rank=0, step=i, loss=-6.9e-307 + i * 1e-309,
                        time=f"2026-01-01T00:00:{i:02d}Z") for i in range(10)]
    chart = render.line_chart(steps, "loss", "loss")
    assert chart is not None and chart["lines"]
    ys = [float(p.split(",")[1]) for p in chart["lines"][0]["points"].split()]
    assert all(math.isfinite(y) for y in ys)
    assert max(ys) > min(ys)  # the values are told apart, not flattened onto one tick
