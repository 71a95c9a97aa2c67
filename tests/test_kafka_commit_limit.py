"""An offset commit while no broker answers ends within its time limit on both consumer backends
(pipeline/sources/kafka_client.py): kafka-python's commit(timeout_ms=...) raises KafkaTimeoutError,
or KafkaConnectionError when it sees the refused connection before its limit (which of the two is a
race with the broker's shutdown; the service takes any KafkaError as an outage to retry), and the
confluent backend's raises KafkaTimeoutError: librdkafka's commit has no limit of its own (it waits
an outage out). Once the broker is back, commits go through again. The broker is the test's own."""

from __future__ import annotations

import threading
import uuid

import pytest

from kafka_backends import BACKENDS, _installed
from kafka_fixtures import produce, wait_until

WAIT_S = 60  # a limit for waiting (a commit that never ends), not a speed


class _Settings:
    def __init__(self, bootstrap: str, client: str):
        self.bootstrap, self.group, self.kafka_client = bootstrap, f"commit-limit-{uuid.uuid4().hex[:6]}", client
        self.client_id, self.start, self.max_poll_records = "gangscope-tests", "earliest", 100
        self.security_protocol = "PLAINTEXT"
        self.session_timeout = 10.0


def in_thread(call) -> dict:
    """`call()` on a thread, waited for at most WAIT_S: {'error': ...} or {'value': ...}; {} if still running."""
    out: dict = {}

    def run():
        try:
            out["value"] = call()
        except Exception as exc:
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(WAIT_S)
    return out


@pytest.mark.servers
@pytest.mark.parametrize("client", BACKENDS)
def test_an_offset_commit_without_a_broker_ends_with_a_timeout_and_commits_go_through_once_it_is_back(
        private_kafka, client):
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError
    from kafka.structs import OffsetAndMetadata

    from gangscope.pipeline.sources import kafka as ksrc
    from gangscope.pipeline.sources.kafka_client import open_consumer

    if not _installed(client):
        pytest.skip("confluent-kafka is not installed")
    bootstrap = private_kafka.address
    topic = f"commit-limit-{uuid.uuid4().hex[:6]}"
    produce(bootstrap, topic, [(b"k", b"v%d" % i) for i in range(20)])
    settings = _Settings(bootstrap, client)
    consumer = open_consumer(settings, client, ksrc.consumer_options(settings))
    consumer.subscribe([topic])
    read: dict = {}

    def poll():
        for tp, messages in consumer.poll(timeout_ms=500).items():
            read[tp] = max(read.get(tp, 0), messages[-1].offset + 1)
        return sum(read.values()) == 20

    wait_until(poll, WAIT_S, every=0, what="the 20 messages read")
    offsets = {tp: OffsetAndMetadata(n, "", -1) for tp, n in read.items()}
    consumer.commit(offsets, timeout_ms=10_000)
    private_kafka.down()
    try:
        done = in_thread(lambda: consumer.commit(offsets, timeout_ms=2000))
        assert done, f"the commit was still waiting for the broker after {WAIT_S} s"
        ended_by = (KafkaTimeoutError, KafkaConnectionError) if client == "kafka-python" else (KafkaTimeoutError,)
        assert isinstance(done.get("error"), ended_by), done
    finally:
        private_kafka.up()

    def commits():
        consumer.poll(timeout_ms=200)  # reconnects (kafka-python works its IO in poll)
        done = in_thread(lambda: consumer.commit(offsets, timeout_ms=2000))
        return "value" in done

    wait_until(commits, 120, every=1, what="a commit going through again")
    consumer.close(autocommit=False, timeout_ms=5000)
