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
