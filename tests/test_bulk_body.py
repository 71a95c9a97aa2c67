"""The OpenSearch sink's bulk body, made from bytes (pipeline/sinks/opensearch.py `_Doc`), held to
what opensearch-py's bulk helper sent before: json.dumps of the action, then the record's JSON."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.records import ErrorRecord, encode
from gangscope.pipeline.sinks.opensearch import _action_parts, _Doc



def _slow(index: str, doc_id: str, source: bytes, require_alias: bool) -> bytes:
    action = {"index": {"_index": index, "_id": doc_id, **({"require_alias": True} if require_alias else {})}}
    return (json.dumps(action) + "\n" + source.decode("utf-8") + "\n").encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(index=st.text(max_size=30), doc_id=st.text(min_size=1, max_size=60), line=st.text(max_size=200),
       require_alias=st.booleans())
def test_a_documents_lines_are_the_bulk_helpers(index, doc_id, line, require_alias):
    record = ErrorRecord(id=doc_id, line=line, namespace="ns", pod="p-0", container="c", time="2026-01-01T00:00:00Z")
    source = encode(record)
    doc = _Doc("error", index, doc_id, source, *_action_parts(index, require_alias))
    assert doc.lines == _slow(index, doc_id, source, require_alias)
    assert doc.size == len(doc.lines)
    assert doc.source == source
    assert json.loads(doc.source) == json.loads(source)  # what a dead letter holds


def test_ids_and_indices_with_quotes_controls_and_other_scripts():
    for doc_id in ('a"b', "a\\b", "line\nbreak", "tab\t", "\x00\x1f", "é日本\U0001F600", "\ud800lone"):
        for index in ("gst-x-gangscope-error", 'we"ird', "ünï"):
            source = b'{"kind":"error"}'
            doc = _Doc("error", index, doc_id, source, *_action_parts(index, True))
            assert doc.lines == _slow(index, doc_id, source, True)
            assert doc.lines.count(b"\n") == 2 and doc.source == source
