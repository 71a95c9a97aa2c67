"""Values printed with thousands separators (torchtitan's `tps: 32,454`, `tflops: 1,204.50`).

A layout the shape cache knows tells whether its values hold commas (Reading.commas), and `build`
then reads them without, at once, instead of after apply_plan's converters refused them (an
exception per line). Both paths must give the same fields: a comma is at the same place in every
segment of a layout, and every converter refuses a text that holds one, so apply_plan's answer is
the same for the texts with or without their commas."""

from __future__ import annotations

from dialect_plans import fixture_plans
from hypothesis import given, settings, strategies as st

from gangscope.parsers.dialects import ShapeCache, apply_plan, build

# torchtitan's step line (fixtures/dialects/torchtitan, torchtitan train.py: f"step: {step:2}  loss: {loss:7.4f}
# ... tps: {round(tps):,}  tflops: {tflops:,.2f}  mfu: {mfu:.2f}%"), colours taken off as StepParser does
TITAN = ("[titan] 2026-11-30 04:41:30,855 - root - INFO - step: {step:2}  loss: {loss:8.5f}  grad_norm: {grad:7.4f}  "
         "memory: {mem:5.2f}GiB({pct:.2f}%)  tps: {tps:,}  tflops: {tflops:,.2f}  mfu: {mfu:.2f}%")

titan_lines = st.builds(
    TITAN.format,
    step=st.integers(1, 10**7),
    loss=st.floats(0, 1e4, allow_nan=False),
    grad=st.floats(0, 1e3, allow_nan=False),
    mem=st.floats(0, 999, allow_nan=False),
    pct=st.floats(0, 100, allow_nan=False),
    tps=st.integers(0, 10**9),
    tflops=st.floats(0, 1e7, allow_nan=False),
    mfu=st.floats(0, 100, allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(titan_lines, min_size=1, max_size=12))
def test_a_known_layout_reads_values_with_commas_as_a_new_one_does(lines):
    shared = ShapeCache()
    for line in lines:
        fresh = build(ShapeCache().read(line))  # a new shape: parsed, the texts as printed
        assert fresh is not None and "throughput" in fresh
        for _ in range(2):  # the second read of a line is its layout's
            assert build(shared.read(line)) == fresh


PLANS = fixture_plans()
value_texts = st.text(alphabet="0123456789,.-+:eEnaNIf ", max_size=12)


def test_the_fixtures_give_plans_of_many_dialects():
    assert len({d.name for d, _plan in PLANS}) >= 10


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_apply_plan_reads_texts_as_they_read_without_commas(data):
    d, plan = data.draw(st.sampled_from(PLANS))
    texts = data.draw(st.lists(value_texts, min_size=len(plan.ops), max_size=len(plan.ops)))
    nonfinite = data.draw(st.booleans())
    assert _nan_equal(apply_plan(d, plan, texts, nonfinite)) == _nan_equal(apply_plan(d, plan, [t.replace(",", "") for t in texts], nonfinite))


def _nan_equal(fields):
    """The fields with every NaN as one marker: two NaN floats are unequal unless they are the same object, so a
    'NaN' read twice compared equal or not by chance (hypothesis drew ['0', '0', 'NaN'] once)."""
    if not isinstance(fields, dict):
        return fields
    return {key: _nan_equal(value) if isinstance(value, dict) else "<nan>" if isinstance(value, float) and value != value else value
            for key, value in fields.items()}
