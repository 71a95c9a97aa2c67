"""The consumer's own per-line steps made cheaper (h19x, issue 19) give what they gave before:
decode_log (block compared inline, line end by its last character, a Struct out of the cycle
collector), the confluent backend's Message (a msgspec Struct made in C) and the sink's bulk
documents (built inline in `write`)."""

from __future__ import annotations

import gc
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers import envelopes
from gangscope.parsers.records import ErrorRecord, encode
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.opensearch import OpenSearchSink, SinkStats, _action_parts, _BulkDoc, _DeadLetter, _Doc
from gangscope.pipeline.sources import kafka as ksrc
from gangscope.pipeline.sources.kafka_client import Message


def _decode_before(value: bytes) -> envelopes.Envelope:
    """decode_log as it was before this change (e865232), kept as the reference."""
    try:
        rec = ksrc._record_decoder.decode(value)
        kube, problem = ksrc._kubernetes_blocks.read(rec.kubernetes)
    except Exception:
        return ksrc._decode_log_general(value)
    if problem is not None:
        raise ksrc.Undecodable("bad_kubernetes", problem)
    text = rec.log
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    stream = rec.stream
    return tuple.__new__(envelopes.Envelope, (rec.time, stream if stream in ("stdout", "stderr") else "stdout",
                                              rec.p == "P", text, kube))


def _outcome(fn, value):
    try:
        return ("ok", fn(value))
    except ksrc.Undecodable as bad:
        return ("bad", bad.reason, bad.detail)


KUBES = [{"pod_name": "p", "namespace_name": "ns", "pod_id": "u1", "container_name": "c", "labels": {"a": "b"}},
         {"pod_name": "q", "namespace_name": "ns", "container_name": "c"}, {"pod_name": ["x"]}, None]
ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(["stdout", "stderr", "P", "F"]),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=500, deadline=None)
@given(log=st.one_of(st.text(max_size=40).map(lambda t: t + st_end) for st_end in ("", "\n", "\r\n", "\r", "\n\n", "\r\r\n")),
       stream=ANY, p=ANY, kube=st.sampled_from(range(len(KUBES))), time=st.one_of(st.text(max_size=30), st.integers()),
       order=st.permutations(["log", "stream", "_p", "time", "kubernetes", "@timestamp"]), drop=st.sets(st.sampled_from(
           ["stream", "_p", "kubernetes", "time"]), max_size=2))
def test_decode_log_as_before(log, stream, p, kube, time, order, drop):
    fields = {"log": log, "stream": stream, "_p": p, "time": time, "kubernetes": KUBES[kube], "@timestamp": 1.5}
    record = {k: fields[k] for k in order if k not in drop and not (k == "kubernetes" and fields[k] is None)}
    value = json.dumps(record).encode()
    # twice each: the second meets the block of the record before (the inline comparison)
    for _ in range(2):
        assert _outcome(ksrc.decode_log, value) == _outcome(_decode_before, value)


def test_decode_log_struct_is_left_out_of_the_collector():
    rec = ksrc._record_decoder.decode(b'{"log": "x", "time": "t", "kubernetes": {"pod_name": "p"}}')
    assert not gc.is_tracked(rec)


class _Raw:
    def key(self):
        return b"k"

    def timestamp(self):
        return (1, 1234)


def test_message_reads_as_kafka_pythons_record():
    m = Message("topic", 3, 17, b"v", _Raw())
    assert (m.topic, m.partition, m.offset, m.value, m.key, m.timestamp) == ("topic", 3, 17, b"v", b"k", 1234)
    assert not gc.is_tracked(m)
    assert Message("t", 0, 1, b"", None).m is None


def _sink() -> OpenSearchSink:
    s = OpenSearchSink.__new__(OpenSearchSink)
    s.stats, s._buffer, s._buffered_bytes, s._actions = SinkStats(), [], 0, {}
    s.batch_docs, s.batch_bytes, s._require_alias, s._install, s._reindex = 1 << 30, 1 << 62, True, False, None
    s._dead = _DeadLetter("/dev/null")
    s._targets = {k: indices.alias_name(k, "p-") for k in indices.KINDS}
    return s


@settings(max_examples=200, deadline=None)
@given(doc_id=st.text(min_size=1, max_size=40), line=st.text(max_size=100))
def test_write_buffers_the_documents_of_doc(doc_id, line):
    record = ErrorRecord(id=doc_id, line=line, namespace="ns", pod="p-0", container="c", time="2026-01-01T00:00:00Z")
    sink = _sink()
    sink.write([record])
    (doc,) = sink._buffer
    index = indices.alias_name("error", "p-")
    want = _Doc("error", index, doc_id, encode(record), *_action_parts(index, True))
    assert type(doc) is _BulkDoc and doc == want
    assert (doc.kind, doc.index, doc.id, doc.size) == ("error", index, doc_id, len(doc.lines))
    assert doc.source == encode(record) and sink._buffered_bytes == doc.size
    assert not gc.is_tracked(doc)
