"""The local folder's updated-in-place kinds (pipeline/sinks/newest_by_id.py): the newest document
of each id at the place of its first write, the same lines as a dict keyed by id gives, whether
the ids stay in memory or are spilled to disk partition by partition."""

import os

from hypothesis import given, settings, strategies as st

from gangscope.pipeline.sinks.newest_by_id import NewestById


def _reference(writes):
    newest = {}
    for record_id, document in writes:
        newest[record_id] = document
    return list(newest.values())


_ids = st.one_of(st.text(alphabet="0123456789abcdef", min_size=24, max_size=24), st.text(max_size=4))
_writes = st.lists(st.tuples(_ids, st.binary(max_size=40)), max_size=300)


@settings(max_examples=200, deadline=None)
@given(_writes, st.sampled_from([1, 2, 7, 1 << 13]), st.sampled_from([1, 50, 500, 1 << 21]))
def test_documents_match_a_dict_spilled_or_not(writes, buffer, max_bytes):
    newest = NewestById(buffer=buffer, max_bytes=max_bytes)
    for record_id, document in writes:
        newest.put(record_id, document)
    assert list(newest.documents()) == _reference(writes)


def test_an_id_rewritten_after_a_spill_keeps_its_first_place_and_its_last_document():
    newest = NewestById(buffer=4)
    writes = [(f"rank-{i}", b"epoch 1 of rank %d" % i) for i in range(10)]
    writes += [("rank-0", b"epoch 3 of rank 0"), ("rank-9", b"epoch 2 of rank 9"), ("rank-10", b"new rank")]
    for record_id, document in writes:
        newest.put(record_id, document)
    spilled = newest._dir.name
    got = list(newest.documents())
    assert got[0] == b"epoch 3 of rank 0" and got[9] == b"epoch 2 of rank 9" and got[10] == b"new rank"
    assert got == _reference(writes)
    assert not os.path.exists(spilled)


def test_large_documents_are_spilled_by_their_bytes_before_the_id_count_is_reached():
    newest = NewestById(buffer=1000, max_bytes=1000)
    writes = [(f"attempt-{i}", b"x" * 300 + b"%d" % i) for i in range(10)] + [("attempt-2", b"rewritten")]
    for record_id, document in writes[:3]:
        newest.put(record_id, document)
    assert newest._dir is None  # 3 x ~300 bytes: held
    for record_id, document in writes[3:]:
        newest.put(record_id, document)
    assert newest._dir is not None and newest._bytes < 1000  # spilled on bytes, 11 ids of 1000
    assert list(newest.documents()) == _reference(writes)
