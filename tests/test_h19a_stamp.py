"""Stamper.stamp written out in one pass (issue 19): its inline time check and ids give what
times.checked_utc and record_id give, for steps whose numbers the bounds null, ranks from a
rank map, and `Z` times whose second was seen valid but whose fraction is not digits."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import EpochRecord, ErrorRecord, StepRecord, TraceRecord
from gangscope.parsers.times import checked_utc
from gangscope.pipeline.curate.identity import Stamper, record_id
from gangscope.pipeline.sources.files import PodIdentity

_BIG = st.none() | st.integers(min_value=-(2**66), max_value=2**66) | st.integers(0, 3)
_TIMES = st.none() | st.sampled_from([
    "", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.5Z", "2024-05-01T12:00:00.50Z", "2024-05-01T12:00:00.x5Z",
    "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00.\u0665Z", "2024-05-01T12:00:61Z", "2024-05-01T14:00:00+02:00",
    "2024-05-01T12:00:00", "2024-02-30T12:00:00Z", "2024-05-01t12:00:00z", "2024-05-01T12:00:00.123456789Z",
])
_KINDS = st.sampled_from([StepRecord, EpochRecord, ErrorRecord, TraceRecord])


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(st.tuples(_KINDS, _TIMES, _BIG, _BIG, _BIG, st.none() | st.floats(allow_nan=False) | st.integers(0, 3),
                               st.sampled_from([None, "generic", "hf_trainer"]), st.integers(0, 2)), min_size=1, max_size=16),
       rank_map=st.booleans(), pod_uid=st.none() | st.just("0f1e"))
def test_stamp_ids_and_times_are_record_id_and_checked_utc(rows, rank_map, pod_uid):
    ident = PodIdentity(namespace="team-a", pod="w-0", pod_uid=pod_uid, container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    skipped = []
    stamper.on_skip = lambda record, kind, detail: skipped.append(kind)
    if rank_map:
        stamper.learn_ranks("2024-05-01T12:00:00Z", {0: 8, 1: 9})
    for cls, time, step, rank, local_rank, epoch, dialect, seq in rows:
        fields = dict(time=time, rank=rank, local_rank=local_rank, seq=seq)
        if cls is StepRecord:
            fields.update(step=step, epoch=epoch, dialect=dialect)
        elif cls is EpochRecord:
            fields.update(step=step, epoch=epoch)
        record = cls(**fields)
        before = len(skipped)
        stamper.stamp(record, "stdout")
        expected_time = (checked_utc(time) if time else None)
        assert record.time == expected_time
        assert ("bad_timestamp" in skipped[before:]) == bool(time and expected_time is None)
        assert record.id == record_id(record, pod_uid)
        for name in ("rank", "local_rank", "step"):
            value = getattr(record, name, None)
            assert value is None or -(2**63) <= value < 2**63


def test_a_step_whose_number_the_bounds_null_gets_a_line_id():
    """The bound sets a step number past a `long` to null: the id is then a line's (record_id's)."""
    stamper = Stamper(PodIdentity(namespace="a", pod="p", pod_uid="u", container="c"), "a/j", "cri")
    for fields in (dict(step=2**64, epoch=1), dict(step=-(2**64)), dict(step=3, rank=2**64), dict(step=3, local_rank=-(2**70))):
        record = stamper.stamp(StepRecord(time="2024-05-01T12:00:00Z", **fields), "stdout")
        assert record.id == record_id(record, "u"), fields
