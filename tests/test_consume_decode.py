"""The consumer's decoding of Fluent Bit records: the fast path (a record of the common shape
decoded straight into its fields, its `kubernetes` block checked once per distinct text) gives the
envelope, or the reason a message is undecodable, that the general reading (JSON to a dict, then
`envelopes.read_record`) gives, on every fixture's records and on hostile variants of them."""

from __future__ import annotations

import json
import random

import pytest

from gangscope.pipeline.sources import kafka as ksrc
from kafka_fixtures import fluentbit_records


def outcome(decode, value):
    try:
        return ("envelope", decode(value))
    except ksrc.Undecodable as bad:
        return ("undecodable", bad.reason, bad.detail)


def same(value):
    fast, general = outcome(ksrc.decode_log, value), outcome(ksrc._decode_log_general, value)
    assert fast == general, value[:300] if value else value
    return fast


def test_every_fixture_record_decodes_as_the_general_reading_has_it():
    records = fluentbit_records()
    assert len(records) > 1000
    for _key, value in records:
        assert same(value)[0] == "envelope"


def _variants(record: dict, rng: random.Random):
    """The record with one field of another JSON type, missing, renamed or duplicated."""
    odd = [None, 1, 2.5, True, [], ["x"], {}, {"a": 1}, "", "P", "stderr", "x\n", "x\r\n"]
    for field in ("log", "time", "stream", "_p", "message", "@timestamp", "kubernetes"):
        for value in odd:
            yield {**record, field: value}
        yield {k: v for k, v in record.items() if k != field}
    kube = record["kubernetes"]
    for field in ("pod_name", "namespace_name", "container_name", "pod_id", "host", "labels", "annotations"):
        for value in odd:
            yield {**record, "kubernetes": {**kube, field: value}}
    yield {**record, "kubernetes": {**kube, "labels": {"app": rng.choice(odd)}}}
    yield {**record, "log": record["log"], "extra": [[[[]]]] * 3, "nested": {"a": {"b": {"c": [1, 2, {"d": None}]}}}}


@pytest.mark.parametrize("seed", range(3))
def test_hostile_variants_of_a_record_give_the_general_readings_envelope_or_reason(seed):
    rng = random.Random(seed)
    records = [json.loads(v) for _k, v in rng.sample(fluentbit_records(), 20)]
    seen = set()
    for record in records:
        for variant in _variants(record, rng):
            got = same(json.dumps(variant).encode())
            seen.add(got[0] if got[0] == "envelope" else got[1])
    assert {"envelope", "bad_kubernetes", "no_log_text"} <= seen


@pytest.mark.parametrize("value", [
    None, b"", b"{oops", b"[1, 2]", b'"log"', b"null", b'{"stream": "stdout"}', b'{"log": "a", "time": "t"',
    b'{"log": "a", "time": "t", "kubernetes": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"log": "a", "time": "t", "deep": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"log": 1, "log": "twice", "time": "t"}', b'{"log": "a\\n", "time": 5, "@timestamp": 1772445600.5}',
    b'{"log": "a", "time": "t", "kubernetes": null}', b'{"log": "a", "time": "t", "kubernetes": "pod"}',
    b'\xff\xfe{"log": "a"}', b'{"log": "\xff", "time": "t"}',
])
def test_malformed_messages_say_the_same_reason_on_both_readings(value):
    same(value)


def test_records_of_one_container_share_one_kubernetes_block():
    _key, value = fluentbit_records()[0]
    first, second = ksrc.decode_log(value), ksrc.decode_log(value)
    assert first.kubernetes == json.loads(value)["kubernetes"]
    assert first.kubernetes is second.kubernetes


def test_a_block_unlike_the_last_ones_is_read_for_itself():
    """The block read last is reused only for the same bytes: records of pods in turn, a bad block
    between them and an empty one each get their own (the fast path compares with the last block
    before its lookup)."""
    base = {"time": "2024-01-01T00:00:00.000000001Z", "stream": "stdout", "_p": "F", "log": "x"}
    pod_a = {"pod_name": "a", "namespace_name": "ns", "container_name": "c", "pod_id": "uid-a"}
    pod_b = {**pod_a, "pod_name": "b", "pod_id": "uid-b"}
    bad = {**pod_a, "labels": ["not", "a", "map"]}
    order = [pod_a, pod_a, pod_b, pod_a, bad, bad, pod_a, None, pod_b, pod_b, None]
    for kube in order:
        value = json.dumps({**base, "kubernetes": kube} if kube is not None else base).encode()
        got = same(value)
        if kube is bad:
            assert got[0] == "undecodable" and got[1] == "bad_kubernetes"
        else:
            assert got[0] == "envelope" and got[1].kubernetes == kube
