"""Record ids: the stamper's shortcut for step ids gives exactly `record_id`."""

from __future__ import annotations

import pytest

from gangscope.parsers.records import StepRecord
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
