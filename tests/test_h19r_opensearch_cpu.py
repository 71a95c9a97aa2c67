"""bench.kafka_consume's throughput run says how much CPU OpenSearch spent beside the consumer: on a
small machine the two share the cores, and OpenSearch's CPU per record is part of the consumer's
speed (this session, 300k realistic lines at load 7-11: 9.3-11.9 s of OpenSearch CPU beside the
consumer's 5.5-7.4 s; issue 19). Against the real OpenSearch."""

from __future__ import annotations

import json
import urllib.request

from bench import kafka_consume


def test_opensearch_cpu_is_the_clusters_process_cpu_in_seconds(opensearch_url):
    url = opensearch_url.rstrip("/")
    before = kafka_consume.opensearch_cpu(url)
    assert before is not None and before > 0
    # (the server refreshes its process stats about once a second: the figure does not move at every call)
    after = kafka_consume.opensearch_cpu(url)
    with urllib.request.urlopen(f"{url}/_nodes/stats/process", timeout=30) as answer:
        nodes = json.loads(answer.read())["nodes"]
    said = sum(n["process"]["cpu"]["total_in_millis"] for n in nodes.values()) / 1000
    assert before <= after <= said < after + 60  # seconds, not milliseconds


def test_opensearch_cpu_is_none_when_nobody_answers():
    assert kafka_consume.opensearch_cpu("http://127.0.0.1:1") is None
