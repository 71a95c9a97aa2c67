"""Record ids: the stamper's shortcuts for step ids and line ids give exactly `record_id`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import ErrorRecord, StepRecord, TraceRecord
from gangscope.pipeline.curate.identity import Stamper, record_id
from gangscope.pipeline.sources.files import PodIdentity


@pytest.mark.parametrize(
    "fields",
    [
        dict(epoch=1, step=3, dialect="generic", rank=2),
        dict(epoch=None, step=5, dialect=None),
        dict(epoch=1.5, step=7, dialect="hf_trainer", local_rank=1),
        dict(epoch=0, step=0, dialect="megatron", rank=0, attempt=2),
    ],
)
def test_step_ids_from_the_prefix_hash_equal_record_id(fields):
    ident = PodIdentity(namespace="team-a", pod="llama-worker-0", pod_uid="0f1e", container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    first = stamper.stamp(StepRecord(time="2024-05-01T12:00:00Z", **fields), "stdout")
    again = stamper.stamp(StepRecord(time="2024-05-01T12:00:09Z", **fields), "stderr")  # prefix reused
    assert first.id == again.id == record_id(first, "0f1e")


def test_step_ids_differ_by_rank_epoch_and_step():
    ident = PodIdentity(namespace="team-a", pod="llama-worker-0", pod_uid="0f1e", container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    ids = {
        stamper.stamp(StepRecord(time="2024-05-01T12:00:00Z", rank=r, epoch=e, step=s, dialect="generic"), None).id
        for r in (0, 1) for e in (1, 2) for s in (1, 2)
    }
    assert len(ids) == 8


def test_a_stamper_that_made_step_ids_pickles_and_goes_on_making_the_same_ids():
    """Checkpoints pickle curators (and their stamper): the prefix hashes are left out and rebuilt."""
    import pickle

    ident = PodIdentity(namespace="team-a", pod="llama-worker-0", pod_uid="0f1e", container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    first = stamper.stamp(StepRecord(time="2024-05-01T12:00:00Z", rank=1, epoch=1, step=9, dialect="generic"), None)
    restored = pickle.loads(pickle.dumps(stamper))
    again = restored.stamp(StepRecord(time="2024-05-01T12:00:00Z", rank=1, epoch=1, step=9, dialect="generic"), None)
    assert again.id == first.id


# Any kind of line record, any stream, rank, time and seq, with or without a pod uid: the id made
# from the stamper's cached prefix (Stamper.stamp) is the one record_id computes in full.
_KINDS = st.sampled_from(["error", "trace", "step"])
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(["\x1f", "\ud800"]), max_size=12)
_INT = st.none() | st.integers(min_value=-(2**70), max_value=2**70)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(_KINDS, st.none() | st.sampled_from(["stdout", "stderr"]) | _TEXT, _INT, _INT,
                                st.none() | _TEXT | st.just("2024-05-01T12:00:00.5Z"), st.integers(0, 3)),
                      min_size=1, max_size=12),
       pod_uid=st.none() | _TEXT, namespace=st.none() | _TEXT)
def test_line_ids_from_the_prefix_hash_equal_record_id(lines, pod_uid, namespace):
    ident = PodIdentity(namespace=namespace, pod="llama-worker-0", pod_uid=pod_uid, container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    for kind, stream, rank, local_rank, time, seq in lines:
        record = (ErrorRecord if kind == "error" else TraceRecord if kind == "trace" else StepRecord)(
            time=time, seq=seq, rank=rank, local_rank=local_rank)
        stamper.stamp(record, stream)  # (a step without a step number has a line's id)
        # the stamp bounds the ranks and checks the time; record_id of what it left
        assert record.id == record_id(record, pod_uid), (kind, stream, rank, local_rank, time, seq)


def test_line_ids_differ_by_stream_rank_time_and_seq():
    ident = PodIdentity(namespace="team-a", pod="llama-worker-0", pod_uid="0f1e", container="pytorch")
    stamper = Stamper(ident, "team-a/llama", "cri")
    ids = {
        stamper.stamp(ErrorRecord(time=f"2024-05-01T12:00:0{t}Z", seq=q, rank=r), s).id
        for s in ("stdout", "stderr") for r in (0, 1) for t in (1, 2) for q in (0, 1)
    }
    assert len(ids) == 16
