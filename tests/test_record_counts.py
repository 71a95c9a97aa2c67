"""summary.json's record counts (pipeline/run/record_counts.py): the same numbers as counting
each id once in an IdSet under the kind it first came as, whether the ids stay in memory or are
spilled to disk partition by partition."""

from hypothesis import given, settings, strategies as st

from gangscope.parsers.id_set import IdSet
from gangscope.pipeline.run.record_counts import RecordCounts


def _reference(stream):
    seen, counts = IdSet(), {}
    for record_id, kind in stream:
        if seen.add(record_id):
            counts[kind] = counts.get(kind, 0) + 1
    return counts


_ids = st.one_of(st.text(alphabet="0123456789abcdef", min_size=16, max_size=16), st.text(max_size=5))
_stream = st.lists(st.tuples(_ids, st.sampled_from(["step", "epoch", "error", "signal"])), max_size=300)


@settings(max_examples=200, deadline=None)
@given(_stream, st.sampled_from([1, 2, 7, 1 << 18]))
def test_counts_match_an_id_set_spilled_or_not(stream, buffer):
    counts = RecordCounts(buffer=buffer)
    for record_id, kind in stream:
        counts.add(record_id, kind)
    assert counts.counts() == _reference(stream)


def test_a_rewritten_id_is_one_document_of_its_first_kind_and_spill_files_go():
    counts = RecordCounts(buffer=3)
    stream = [(f"{i:04x}{0:012x}", "step") for i in range(50)] + [("ffff000000000000", "epoch")] * 10 + [(f"{i:04x}{0:012x}", "error") for i in range(20)]
    for record_id, kind in stream:
        counts.add(record_id, kind)
    spilled = counts._ids._dir.name  # the spill files of its KeyedWords
    assert counts.counts() == {"step": 50, "epoch": 1}
    import os
    assert not os.path.exists(spilled)
