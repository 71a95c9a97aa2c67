"""Snapshots of curation state (pipeline/curate/snapshot.py, pipeline/run/checkpoint.py): a partition
taken through an encoded snapshot into a fresh one curates on exactly as one that never stopped, and
a payload that is not a snapshot of this schema is refused with a reason, never executed."""

from __future__ import annotations

import json
import pickle
import zlib

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangscope.parsers.records import encode
from gangscope.parsers.steps import StepState
from gangscope.parsers.traces import TraceState
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate import partition, snapshot
from gangscope.pipeline.curate.snapshot import SCHEMA, SnapshotError
from gangscope.pipeline.run import checkpoint
from gangscope.pipeline.sources import kafka as ksrc

from kafka_fixtures import ROOT, fluentbit_records

# Runs with tracebacks (chained, exception groups, torchrun's failure box, a spawn, a faulthandler
# dump, long lines) and dialects with progress bars, Trainer logs dicts, Keras epoch headers and
# Composer/Rich blocks: what parsers hold open across lines.
FIXTURES = [ROOT / "fixtures" / name for name in (
    "runs/chained", "runs/exception_group", "runs/rank_raises", "runs/mp_spawn", "runs/segfault", "runs/long_lines",
    "dialects/hf_trainer", "dialects/hf_trainer_torchrun", "dialects/keras", "dialects/lightning",
    "dialects/composer", "dialects/lightning_rich", "dialects/plain_slash")]


@pytest.fixture(scope="module")
def items():
    return [(i, ksrc.decode_log(value)) for i, (_key, value) in enumerate(fluentbit_records(FIXTURES))]


@pytest.fixture(scope="module")
def uninterrupted(items):
    return curate(items)


def curate(items, cuts=(), states=None) -> list[bytes]:
    """Records (encoded) of the items fed through one partition; before each offset in `cuts` the
    partition is snapshotted, encoded, decoded and restored into a fresh one (the decoded states
    appended to `states`)."""
    attempt_of = AttemptOf(EventBook())
    part = partition.LogPartition(attempt_of, progress=DerivedProgress())
    out = []
    bounds = sorted({0, len(items), *cuts})
    for a, b in zip(bounds, bounds[1:]):
        if a in cuts:
            data = checkpoint.dumps(part)
            if states is not None:
                states.append(snapshot.decode(data))
            part = checkpoint.loads(data, attempt_of, progress=DerivedProgress()).restored(0.0)
        part.feed_batch(items[a:b], out, None)
    part.close_all(out)
    return [encode(r) for r in out]


def _parser_states(state, kind):
    return [p for c in state.curator.containers for sub in c.subs for p in sub.parsers if isinstance(p, kind)]


def test_a_partition_cut_before_every_line_curates_as_one_that_never_stopped(items, uninterrupted):
    states = []
    assert curate(items, set(range(1, len(items))), states) == uninterrupted
    # the cuts fell inside what parsers hold open: a traceback, a torchrun failure box, a progress bar's
    # step being assembled, Trainer logs dicts waiting for their step, ranks' progress
    traces = [t for s in states for t in _parser_states(s, TraceState)]
    assert any(t.line_count >= 5 for t in traces)
    assert any(t.failures is not None and t.failures.lines >= 3 for t in traces)
    steps = [p for s in states for p in _parser_states(s, StepState)]
    assert any(p.pending is not None and p.pending.fields.get("dialect") == "tqdm" for p in steps)
    assert any(p.block is not None for p in steps)
    assert any(p.epoch is not None for p in steps)
    assert any(c.trainer_logs.logs or c.trainer_logs.held for s in states for c in s.curator.containers)
    assert any(s.progress is not None and s.progress.ranks for s in states)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_random_cuts_change_nothing(items, uninterrupted, data):
    cuts = data.draw(st.sets(st.integers(1, len(items) - 1), max_size=25))
    assert curate(items, cuts) == uninterrupted


def _fluentbit(i: int, text: str, partial: bool = False, stream: str = "stderr", pod: str = "train-worker-0") -> tuple:
    value = {"time": f"2024-05-01T12:00:{i // 10:02d}.{i % 10}00000Z", "stream": stream, "_p": "P" if partial else "F",
             "log": text, "kubernetes": {"namespace_name": "team-a", "pod_name": pod, "container_name": "pytorch"}}
    return i, ksrc.decode_log(json.dumps(value).encode())


def test_a_cut_between_the_chunks_of_a_partial_line_joins_them_as_one_run_does():
    lines = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "    main(",
             "RuntimeError: CUDA error: an illegal memory access ", "was encountered", "step 1/10 loss 2.5"]
    partial = {3}
    items = [_fluentbit(i, text, i in partial) for i, text in enumerate(lines)]
    assert curate(items, set(range(1, len(items)))) == curate(items)
    assert any(r.startswith(b'{"kind":"trace"') and b"illegal memory access was encountered" in r for r in curate(items))


def test_state_the_build_rebuilds_is_not_in_a_snapshot(items):
    part = partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())
    part.feed_batch(items[:500], [], None)
    plain = msgspec.to_builtins(part.snapshot())
    text = json.dumps(plain, default=repr)
    for cache in ("_step_prefixes", "_open_cache", "_cache", "prefilters", "attempt_of", "limits", "_seconds"):
        assert cache not in text


# -- what is not a snapshot of this schema ----------------------------------------------------------


def _payload(obj) -> bytes:
    return zlib.compress(msgspec.msgpack.encode(obj))


def test_a_newer_schema_is_refused_with_both_numbers():
    data = _payload({"schema": SCHEMA + 1, "gangscope": "9.0.0", "partition": {"future": True}})
    with pytest.raises(SnapshotError, match=rf"schema {SCHEMA + 1} \(gangscope 9.0.0\) is newer than this build reads \({SCHEMA}\)"):
        snapshot.decode(data)


def test_an_older_schema_is_refused():
    with pytest.raises(SnapshotError, match=rf"schema 1 .* is older than this build reads \({SCHEMA}\)"):
        snapshot.decode(_payload({"schema": 1, "gangscope": "0.1.0", "partition": {}}))


RAN: list[str] = []


def _ran(what: str) -> None:
    RAN.append(what)


class _Payload:
    """Unpickled, it calls `_ran`: what any code a pickle names would do."""

    def __reduce__(self):
        return _ran, ("code from a checkpoint",)


def test_a_pickle_is_refused_and_never_run():
    live = pickle.dumps({"state": _Payload()}, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.loads(live)
    assert RAN == ["code from a checkpoint"]  # the payload is live: unpickling it runs code
    RAN.clear()
    for data in (zlib.compress(live, 1), live):  # as the older builds stored it, and bare
        with pytest.raises(SnapshotError, match="not a gangscope snapshot"):
            checkpoint.loads(data, AttemptOf(EventBook()))
    assert RAN == []


@pytest.mark.parametrize("data", [b"", b"garbage", zlib.compress(b"garbage"), _payload([1, 2]),
                                  _payload({"gangscope": "0.1.0"}), _payload({"schema": "2"})])
def test_what_is_no_snapshot_says_so(data):
    with pytest.raises(SnapshotError, match="not a gangscope snapshot"):
        snapshot.decode(data)


def test_a_snapshot_of_this_schema_that_does_not_read_as_one_is_refused():
    with pytest.raises(SnapshotError, match=f"schema {SCHEMA} snapshot does not read"):
        snapshot.decode(_payload({"schema": SCHEMA, "gangscope": "x", "partition": {"curator": {"containers": 3}}}))


def test_a_snapshot_that_does_not_restore_is_refused(items):
    part = partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())
    part.feed_batch(items[:200], [], None)
    state = part.snapshot()
    state.curator.containers[0].open = [99]  # an open sub-stream it does not have
    with pytest.raises(SnapshotError, match="does not restore"):
        checkpoint.loads(snapshot.encode(state), AttemptOf(EventBook()))


def test_the_service_logs_a_newer_checkpoint_and_goes_on_from_the_committed_offset():
    from structlog.testing import capture_logs

    from gangscope.pipeline.run import config
    from gangscope.pipeline.run.service import Service

    class Store:
        def load(self, topic, partition):
            return 40, _payload({"schema": SCHEMA + 1, "gangscope": "9.0.0", "partition": {}})

    class TopicPartition:
        topic, partition = "pod-logs", 0

    service = Service(config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1"}, environ={}), install_signals=False)
    service.store = Store()
    with capture_logs() as logs:
        state, start = service._restore(TopicPartition(), 17, 0.0)
    assert (state, start) == (None, 17)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
        f"checkpoint schema {SCHEMA + 1} (gangscope 9.0.0) is newer than this build reads ({SCHEMA}): not used"]


def test_a_restored_partition_snapshots_as_it_was_taken(items):
    part = partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())
    part.feed_batch(items[: len(items) // 2], [], None)
    data = checkpoint.dumps(part)
    again = checkpoint.dumps(checkpoint.loads(data, AttemptOf(EventBook()), progress=DerivedProgress()))
    assert zlib.decompress(again) == zlib.decompress(data)
