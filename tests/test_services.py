"""The local servers of services/: real Kafka and OpenSearch, and the scripts that run them."""
from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from kafka_fixtures import free_ports

SERVICES = Path(__file__).resolve().parent.parent / "services"


def _run(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVICES / script), *args], capture_output=True, text=True,
        stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, timeout=900,
    )


def _process_alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a parent that may never reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_kafka_delivers_a_produced_message(kafka_bootstrap, kafka_topic):
    from kafka import KafkaConsumer, KafkaProducer

    topic = kafka_topic()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    producer.send(topic, key=b"pod-a", value=b'{"log":"epoch 1/3"}').get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(
        topic, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
        enable_auto_commit=False, consumer_timeout_ms=30_000,
    )
    first = next(consumer)  # StopIteration after 30s with nothing: fails the test
    consumer.close()
    assert (first.key, first.value) == (b"pod-a", b'{"log":"epoch 1/3"}')


def test_opensearch_finds_an_indexed_document(opensearch_url, index_prefix):
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[opensearch_url])
    index = f"{index_prefix}-error"
    client.index(index=index, id="rec-1", body={"job": "ns/train", "message": "CUDA out of memory"}, refresh=True)
    client.index(index=index, id="rec-2", body={"job": "ns/train", "message": "epoch done"}, refresh=True)
    found = client.search(index=index, body={"query": {"match": {"message": "memory"}}})
    assert [h["_id"] for h in found["hits"]["hits"]] == ["rec-1"]


def test_up_again_reports_already_up_with_the_same_lines(kafka_bootstrap, kafka_sasl, opensearch_url):
    expected = [f"GANGSCOPE_KAFKA_BOOTSTRAP={kafka_bootstrap}", f"GANGSCOPE_KAFKA_SASL_BOOTSTRAP={kafka_sasl[0]}",
                f"GANGSCOPE_OPENSEARCH_URL={opensearch_url}"]
    if _run("status").stdout.splitlines() != expected:
        pytest.skip("the servers in use are not the ones services/up runs here")
    again = _run("up")
    assert (again.returncode, again.stdout.splitlines()) == (0, expected)
    assert "kafka already up" in again.stderr and "opensearch already up" in again.stderr
    assert _run("status").returncode == 0


def test_down_with_nothing_running_is_harmless(tmp_path):
    down = _run("down", env={"GANGSCOPE_SERVICES_RUN": str(tmp_path)})
    assert (down.returncode, down.stdout) == (0, "")
    assert "kafka not running" in down.stderr and "opensearch not running" in down.stderr


def test_up_names_a_taken_port_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        up = _run("up", "kafka", env={"GANGSCOPE_SERVICES_RUN": str(tmp_path), "GANGSCOPE_KAFKA_PORT": str(port)})
    assert (up.returncode, up.stdout) == (1, "")
    assert up.stderr.count("\n") == 1 and f"127.0.0.1:{port} is already in use" in up.stderr


def test_up_rejects_an_unknown_server():
    up = _run("up", "zookeeper")
    assert (up.returncode, up.stdout) == (2, "")
    assert up.stderr.startswith("services/up: unknown server 'zookeeper'") and up.stderr.count("\n") == 1


@pytest.mark.servers
def test_down_stops_the_server_up_started(tmp_path):
    port, controller, sasl = free_ports(3)
    env = {
        "GANGSCOPE_SERVICES_RUN": str(tmp_path),
        "GANGSCOPE_KAFKA_PORT": str(port),
        "GANGSCOPE_KAFKA_CONTROLLER_PORT": str(controller),
        "GANGSCOPE_KAFKA_SASL_PORT": str(sasl),
        "GANGSCOPE_KAFKA_HEAP": "256m",
    }
    up = _run("up", "kafka", env=env)
    assert up.returncode == 0, up.stderr
    pid = json.loads((tmp_path / "kafka" / "state.json").read_text())["pid"]
    assert _process_alive(pid)
    down = _run("down", "kafka", env=env)
    assert down.returncode == 0, down.stderr
    assert not _process_alive(pid)
    assert _run("status", "kafka", env=env).returncode == 1


def test_opensearch_node_loads_the_distribution_modules(opensearch_url):
    from opensearchpy import OpenSearch

    nodes = OpenSearch(hosts=[opensearch_url]).nodes.info(metric="plugins")["nodes"]
    modules = {m["name"] for node in nodes.values() for m in node["modules"]}
    assert {"transport-netty4", "lang-painless", "analysis-common", "mapper-extras", "reindex"} <= modules


def test_an_index_template_maps_new_indices_and_an_alias_swaps_atomically(opensearch_url, index_prefix):
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[opensearch_url])
    client.indices.put_index_template(name=f"{index_prefix}-step", body={
        "index_patterns": [f"{index_prefix}-step-v*"],
        "template": {"mappings": {"properties": {"time": {"type": "date_nanos"}, "job": {"type": "keyword"}}}},
    })
    client.indices.create(index=f"{index_prefix}-step-v1", body={"aliases": {f"{index_prefix}-step": {}}})
    client.indices.create(index=f"{index_prefix}-step-v2")
    client.indices.update_aliases(body={"actions": [
        {"remove": {"index": f"{index_prefix}-step-v1", "alias": f"{index_prefix}-step"}},
        {"add": {"index": f"{index_prefix}-step-v2", "alias": f"{index_prefix}-step"}},
    ]})
    mapping = client.indices.get_mapping(index=f"{index_prefix}-step-v2")
    assert mapping[f"{index_prefix}-step-v2"]["mappings"]["properties"]["time"] == {"type": "date_nanos"}
    assert list(client.indices.get_alias(name=f"{index_prefix}-step")) == [f"{index_prefix}-step-v2"]


def test_the_aggregations_panels_use_answer(opensearch_url, index_prefix):
    from opensearchpy import OpenSearch, helpers

    client = OpenSearch(hosts=[opensearch_url])
    index = f"{index_prefix}-step-v1"
    client.indices.create(index=index, body={"mappings": {"properties": {
        "job": {"type": "keyword"}, "time": {"type": "date_nanos"}, "loss": {"type": "float"}, "step": {"type": "long"},
    }}})
    docs = [
        {"job": "ns/a", "time": "2026-03-02T10:00:00.000000001Z", "loss": 2.0, "step": 1},
        {"job": "ns/a", "time": "2026-03-02T10:01:00Z", "loss": 1.0, "step": 2},
        {"job": "ns/b", "time": "2026-03-02T10:01:30Z", "loss": 4.0, "step": 1},
    ]
    helpers.bulk(client, ({"_index": index, "_id": str(i), **d} for i, d in enumerate(docs)), refresh=True)
    answer = client.search(index=index, body={"size": 0, "aggs": {
        "jobs": {"terms": {"field": "job"}, "aggs": {
            "last": {"top_hits": {"size": 1, "sort": [{"time": "desc"}], "_source": ["step"]}},
            "low": {"min": {"field": "loss"}}, "high": {"max": {"field": "loss"}},
            "median": {"percentiles": {"field": "loss", "percents": [50]}},
        }},
        "per_minute": {"date_histogram": {"field": "time", "fixed_interval": "1m"}},
    }})["aggregations"]
    job_a = answer["jobs"]["buckets"][0]
    assert (job_a["key"], job_a["doc_count"]) == ("ns/a", 2)
    assert job_a["last"]["hits"]["hits"][0]["_source"] == {"step": 2}
    assert (job_a["low"]["value"], job_a["high"]["value"], job_a["median"]["values"]["50.0"]) == (1.0, 2.0, 1.5)
    assert [b["doc_count"] for b in answer["per_minute"]["buckets"]] == [1, 2]


def test_reindex_runs_a_painless_script(opensearch_url, index_prefix):
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[opensearch_url])
    client.index(index=f"{index_prefix}-step-v1", id="s1", body={"step": 1}, refresh=True)
    client.reindex(body={
        "source": {"index": f"{index_prefix}-step-v1"}, "dest": {"index": f"{index_prefix}-step-v2"},
        "script": {"lang": "painless", "source": "ctx._source.step += 100"},
    }, refresh=True)
    assert client.get(index=f"{index_prefix}-step-v2", id="s1")["_source"] == {"step": 101}
