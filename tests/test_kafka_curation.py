"""The consumer's curation of Fluent Bit records, without servers: decoding, the batch scan, checkpoints."""

from __future__ import annotations

import json
import random

import pytest

from gangscope.parsers.records import encode
from gangscope.pipeline.run import checkpoint
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate import events as curate_events
from gangscope.pipeline.curate import partition
from gangscope.pipeline.sources import kafka as ksrc

from kafka_fixtures import fluentbit_records


@pytest.fixture(scope="module")
def items():
    return [(i, ksrc.decode_log(value)) for i, (_key, value) in enumerate(fluentbit_records())]


def curate_all(items, *, scanner=None, batch=500, cut=()):
    """Records of the items fed in batches; at each offset in `cut` the state goes through a checkpoint."""
    attempt_of = AttemptOf(EventBook())
    state = partition.LogPartition(attempt_of, progress=DerivedProgress())
    out = []
    bounds = sorted({0, len(items), *range(0, len(items), batch), *cut})
    for a, b in zip(bounds, bounds[1:]):
        if a in cut:
            state = checkpoint.loads(checkpoint.dumps(state), attempt_of, progress=DerivedProgress())
        state.feed_batch(items[a:b], out, scanner)
    state.close_all(out)
    return [encode(r) for r in out]


def test_the_batch_scan_skips_only_lines_no_parser_would_take(items):
    scanner = partition.text_scanner()
    if scanner is None:
        pytest.skip("Hyperscan is not installed")
    assert curate_all(items, scanner=scanner) == curate_all(items)


def test_a_state_restored_from_checkpoints_curates_on_as_if_never_stopped(items):
    cuts = set(random.Random(8).sample(range(1, len(items)), 40))
    assert curate_all(items, cut=cuts) == curate_all(items)


def test_fluent_bit_records_decode_to_envelopes_with_their_kubernetes_block():
    value = json.dumps({"@timestamp": 1714564800.123456, "time": "2024-05-01T12:00:00.123456789Z",
                        "stream": "stderr", "_p": "P", "log": "RuntimeError: CUDA error",
                        "kubernetes": {"pod_name": "llama-train-worker-3", "namespace_name": "team-a"}}).encode()
    env = ksrc.decode_log(value)
    assert (env.time, env.stream, env.partial, env.text) == ("2024-05-01T12:00:00.123456789Z", "stderr", True,
                                                             "RuntimeError: CUDA error")
    assert env.kubernetes["pod_name"] == "llama-train-worker-3"


@pytest.mark.parametrize("value, reason", [
    (None, "empty"), (b"{oops", "not_json"), (b"[1, 2]", "not_an_object"), (b'{"stream": "stdout"}', "no_log_text"),
])
def test_undecodable_log_messages_say_why(value, reason):
    with pytest.raises(ksrc.Undecodable) as bad:
        ksrc.decode_log(value)
    assert bad.value.reason == reason


def test_an_event_message_becomes_an_event_record():
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "w.17a", "namespace": "team-a", "uid": "u-1"},
             "involvedObject": {"kind": "Workload", "name": "pytorchjob-llama-train-1a2b3", "namespace": "team-a"},
             "reason": "Admitted", "message": "Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s",
             "type": "Normal", "count": 1, "firstTimestamp": "2026-03-02T10:00:00Z",
             "lastTimestamp": "2026-03-02T10:00:00Z"}
    decoded = curate_events.events_of_message(json.dumps(event).encode())
    assert [r.reason for r in decoded.records] == ["Admitted"]


def test_an_event_message_is_redacted_as_replay_redacts_an_event_file():
    password = "S3cr3tPa55w0rd"
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "llama-train-worker-0.17b", "namespace": "team-a",
                                                                "uid": "u-2"},
             "involvedObject": {"kind": "Pod", "name": "llama-train-worker-0", "namespace": "team-a"},
             "reason": "Failed", "type": "Warning", "count": 1, "firstTimestamp": "2026-03-02T10:00:05Z",
             "lastTimestamp": "2026-03-02T10:00:05Z",
             "message": f'Failed to pull image "registry.example.com/team/trainer:1.4": pull from '
                        f'https://robot:{password}@registry.example.com/v2/team/trainer/manifests/1.4: unauthorized'}  # fmt: skip
    value = json.dumps(event).encode()
    consumed = curate_events.events_of_message(value).records
    replayed = [r for r in curate_events.events_of_lines([value.decode()]) if getattr(r, "kind", None) == "event"]
    assert password not in encode(consumed[0]).decode()
    assert [encode(r) for r in consumed] == [encode(r) for r in replayed]


def test_an_event_message_of_an_unknown_kind_is_undecodable():
    with pytest.raises(ksrc.Undecodable) as bad:
        curate_events.events_of_message(b'{"kind": "ConfigMap", "metadata": {"name": "x"}}')
    assert bad.value.reason == "unknown_kind"


def test_a_partition_forgets_the_containers_its_curator_evicted():
    from gangscope.pipeline.curate.stats import CurationLimits

    state = partition.LogPartition(AttemptOf(EventBook()), limits=CurationLimits(max_containers=16), progress=DerivedProgress())
    out = []
    for pod in range(500):
        value = json.dumps({"time": "2024-05-01T12:00:00.5Z", "stream": "stderr", "log": "Traceback (most recent call last):",
                            "kubernetes": {"namespace_name": "team-a", "pod_name": f"train-worker-{pod}",
                                           "container_name": "pytorch"}}).encode()  # fmt: skip
        touched = state.feed_batch([(pod, ksrc.decode_log(value))], out, None)
        state.touched(touched, now=float(pod))
    assert len(state.curator.curators) <= 16
    assert set(state.last_seen) == set(state.curator.curators)
    assert sorted(t.pod for t in out if t.kind == "trace") == sorted(
        f"train-worker-{p}" for p in range(500) if ("team-a", f"train-worker-{p}", "pytorch") not in state.curator.curators)
