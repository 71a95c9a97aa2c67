"""A consumer's poll on either backend returns the messages that came without waiting out its whole
timeout (pipeline/sources/kafka_client.py). librdkafka's consume(n, timeout) waits the timeout out
unless n messages come: the service's 200 ms polls waited that long at every poll of a stream slower
than max_poll_records per 200 ms. Against the real broker."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_backends import BACKENDS, _installed
from kafka_fixtures import produce

TIMEOUT_MS = 60_000  # each poll's timeout: one that waited it out would take a minute
DEADLINE_S = 30  # a deadline for the three messages, not a speed


class _Settings:
    def __init__(self, bootstrap: str, client: str):
        self.bootstrap, self.group, self.kafka_client = bootstrap, f"poll-{uuid.uuid4().hex[:6]}", client
        self.client_id, self.start, self.max_poll_records = "gangscope-tests", "earliest", 5000
        self.security_protocol = "PLAINTEXT"
        self.session_timeout = 10.0


@pytest.mark.parametrize("client", BACKENDS)
def test_a_poll_returns_the_messages_that_came_before_its_timeout(client, kafka_bootstrap, kafka_topic):
    if not _installed(client):
        pytest.skip("confluent-kafka is not installed")
    from gangscope.pipeline.sources import kafka as ksrc
    from gangscope.pipeline.sources.kafka_client import open_consumer

    topic = kafka_topic(partitions=1)
    produce(kafka_bootstrap, topic, [(None, b"one"), (None, b"two"), (None, b"three")])
    settings = _Settings(kafka_bootstrap, client)
    consumer = open_consumer(settings, client, ksrc.consumer_options(settings))
    try:
        consumer.subscribe([topic])
        start = time.monotonic()
        got: list[bytes] = []
        while len(got) < 3 and time.monotonic() - start < DEADLINE_S:
            for messages in consumer.poll(timeout_ms=TIMEOUT_MS).values():
                got.extend(m.value for m in messages)
        assert got == [b"one", b"two", b"three"]
        assert time.monotonic() - start < DEADLINE_S
    finally:
        consumer.close()
