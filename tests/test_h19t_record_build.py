"""Building a record once a parser has read its line, held to the plain code it replaced (h19t):
the stamp (identity fields from one tuple, a `Z` time written back only when the check changed
it) gives the same record and the same skips as the stamp as it was, and a finished step's record
(`_Pending.record`: the line's coordinates set after the fields) is the one the call with all of
them built."""

from __future__ import annotations

import pickle

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.parsers.lines import Line
from gangscope.parsers.records import ErrorRecord, StepRecord, TraceRecord
from gangscope.parsers.steps import _Pending
from gangscope.parsers.times import checked_utc
from gangscope.pipeline.curate.identity import Stamper
from gangscope.pipeline.sources.files import PodIdentity

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def stamp_as_it_was(stamper: Stamper, record, stream):
    """Stamper.stamp before h19t, but for the part after the time (unchanged, run as it is)."""
    ident = stamper.identity
    record.namespace = ident.namespace
    record.pod = ident.pod
    record.container = ident.container
    record.node = ident.node
    record.job = stamper.job
    record.source = stamper.source
    if stream is not None:
        record.stream = stream
    time = record.time
    if time:
        utc = checked_utc(time)
        if utc is None:
            stamper._skipped(record, "bad_timestamp", f"time {time[:40]!r}")
        record.time = utc
    else:
        record.time = None
    # the rest of the stamp (ranks, bounds, attempt, id) reads the fields set above: the new stamp
    # of a record whose identity and time are already written does it alone
    return stamper.stamp(record, None)


_TIMES = st.none() | st.sampled_from(["", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123456789Z", "2024-05-01T12:00:00.Z",
                                      "2024-02-30T12:00:00.5Z", "2024-05-01T12:00:00.\u0663Z", "2024-05-01T14:00:00.25+02:00",
                                      "2024-05-01 12:00:00z", "2024-05-01T12:00:00", "garbage Z", "Z"])
_INT = st.none() | st.integers(min_value=-(2**64), max_value=2**64)
_IDENTS = st.builds(PodIdentity, namespace=st.none() | st.just("team-a"), pod=st.sampled_from(["w-0", "w-1"]),
                    pod_uid=st.none() | st.just("0f1e"), container=st.none() | st.just("pytorch"),
                    node=st.none() | st.just("node-7"))


def _record(kind, time, rank, local_rank, step, seq):
    if kind == "step":
        return StepRecord(time=time, rank=rank, local_rank=local_rank, step=step, seq=seq, dialect="generic",
                          metrics={"tokens": step} if step is not None else {})
    if kind == "trace":
        return TraceRecord(time=time, rank=rank, local_rank=local_rank, seq=seq, exception_type="ValueError")
    return ErrorRecord(time=time, rank=rank, local_rank=local_rank, seq=seq, message="boom")


@SETTINGS
@given(ident=_IDENTS, job=st.none() | st.just("team-a/llama"), stream=st.none() | st.sampled_from(["stdout", "stderr"]),
       records=st.lists(st.tuples(st.sampled_from(["step", "error", "trace"]), _TIMES, _INT, _INT, _INT,
                                  st.integers(0, 3)), min_size=1, max_size=8))
def test_the_stamp_gives_the_records_and_skips_the_stamp_as_it_was_gave(ident, job, stream, records):
    new, old = Stamper(ident, job, "cri"), Stamper(ident, job, "cri")
    new_skips, old_skips = [], []
    new.on_skip = lambda record, kind, detail: new_skips.append((kind, detail, msgspec.json.encode(record)))
    old.on_skip = lambda record, kind, detail: old_skips.append((kind, detail, msgspec.json.encode(record)))
    for fields in records:
        a = new.stamp(_record(*fields), stream)
        b = stamp_as_it_was(old, _record(*fields), stream)
        assert msgspec.json.encode(a) == msgspec.json.encode(b)
    assert new_skips == old_skips


def test_a_z_time_is_kept_as_the_same_string_and_an_empty_one_becomes_null():
    stamper = Stamper(PodIdentity(namespace="team-a", pod="w-0", container="pytorch"), "team-a/llama", "cri")
    time = "2024-05-01T12:00:00.5Z"
    assert stamper.stamp(ErrorRecord(time=time), None).time is time
    assert stamper.stamp(ErrorRecord(time=""), None).time is None
    assert stamper.stamp(ErrorRecord(time="2024-05-01T14:00:00+02:00"), None).time == "2024-05-01T12:00:00Z"


def test_a_pickled_stamper_stamps_its_identity():
    """The identity tuple is made again when a pickled stamper (a checkpoint's) is read."""
    stamper = Stamper(PodIdentity(namespace="team-a", pod="w-0", container="pytorch", node="node-7"), "team-a/llama", "cri")
    state = stamper.__getstate__()
    del state["_where"]  # a stamper pickled before the tuple was kept
    restored = Stamper.__new__(Stamper)
    restored.__setstate__(state)
    again = pickle.loads(pickle.dumps(stamper))
    for s in (restored, again):
        r = s.stamp(ErrorRecord(time="2024-05-01T12:00:00Z"), None)
        assert (r.namespace, r.pod, r.container, r.node, r.job, r.source) == ("team-a", "w-0", "pytorch", "node-7",
                                                                               "team-a/llama", "cri")


_NUM = st.none() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)


@SETTINGS
@given(step=st.none() | st.integers(0, 10**6), loss=_NUM, epoch=_NUM, dialect=st.none() | st.sampled_from(["generic", "hf_trainer"]),
       metrics=st.dictionaries(st.sampled_from(["tokens", "mfu", "tqdm_writes"]), st.floats(allow_nan=False), max_size=3),
       nonfinite=st.none() | st.just(["loss"]), time=st.none() | st.just("2024-05-01T12:00:00.5Z"), seq=st.integers(0, 9),
       rank=st.none() | st.integers(0, 511), local_rank=st.none() | st.integers(0, 7), pending_rank=st.none() | st.integers(0, 511))
def test_a_pending_steps_record_is_the_one_the_call_with_its_line_built(step, loss, epoch, dialect, metrics, nonfinite,
                                                                         time, seq, rank, local_rank, pending_rank):
    fields = {"step": step, "loss": loss, "epoch": epoch, "dialect": dialect, "metrics": metrics}
    if nonfinite is not None:
        fields["nonfinite"] = nonfinite
    line = Line(time, seq, "step line", rank, local_rank)
    expected = StepRecord(time=line.time, seq=line.seq, rank=pending_rank, local_rank=line.local_rank, **fields)
    assert msgspec.json.encode(_Pending(dict(fields), line, pending_rank).record()) == msgspec.json.encode(expected)
