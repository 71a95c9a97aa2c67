"""back_half.in_reading_order: records of no event are sorted by a key without the leading 0 every
key had (the sort's fast compare goes by the keys' first items); the order is the one the whole
key gives (kept here as the reference), the same objects, equal keys in their order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.records import ErrorRecord, EventRecord, StepRecord, TraceRecord
from gangscope.pipeline.diagnose.back_half import in_reading_order


def _reference(records, event_order=None):
    if not event_order:
        events = sorted((r for r in records if r.kind == "event"), key=lambda r: (r.time or "", r.id))
        event_order = {r.id: i for i, r in enumerate(events)}
    last = len(event_order)

    def step_of(r):
        step = getattr(r, "step", None)
        return step if type(step) is int else -1

    return sorted(records, key=lambda r: (event_order.get(r.id, last) if r.kind == "event" else 0,
                                          r.time or "", r.seq, step_of(r), r.id))


_times = st.sampled_from([None, "", "2026-01-01T00:00:01Z", "2026-01-01T00:00:01.5Z", "2026-01-01T00:00:02Z",
                          "2026-01-01T01:00:01+01:00"])


@st.composite
def records(draw, events: bool):
    out = []
    for i in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["step", "error", "trace", "event"] if events else ["step", "error", "trace"]))
        common = dict(id=draw(st.sampled_from([f"r{i}", "dup"])), time=draw(_times), seq=draw(st.integers(0, 2)))
        if kind == "step":
            out.append(StepRecord(step=draw(st.one_of(st.none(), st.integers(0, 3), st.just(2.0))), **common))
        elif kind == "error":
            out.append(ErrorRecord(**common))
        elif kind == "trace":
            out.append(TraceRecord(**common))
        else:
            out.append(EventRecord(**common))
    return out


@settings(max_examples=300, deadline=None)
@given(st.booleans().flatmap(records))
def test_the_reading_order_is_the_whole_key_s(recs):
    got, want = in_reading_order(recs), _reference(recs)
    assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
    order = {r.id: i for i, r in enumerate(reversed([r for r in recs if r.kind == "event"]))}
    got, want = in_reading_order(recs, order), _reference(recs, order)
    assert all(a is b for a, b in zip(got, want))
