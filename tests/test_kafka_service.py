"""`gangscope consume` against the real Kafka and OpenSearch: the fixtures, shipped as Fluent Bit
would ship them, end up in OpenSearch exactly as `replay` of the same files puts them there, through
crashes, rebalances and undecodable messages."""

from __future__ import annotations

import json
import random
import time
import urllib.request
import uuid

import pytest
from kafka import KafkaConsumer

from kafka_backends import BACKENDS, _installed
from kafka_fixtures import (
    committed_offsets,
    comparable,
    difference,
    documents,
    end_offsets,
    fluentbit_records,
    produce,
    replay_into,
    service_command,
    settled,
    split_by_job,
    start_service,
    stop,
    wait_until,
)

# Deadlines for waiting on the service (not speed assertions: bench/kafka_consume.py measures speed).
SETTLE_S = 120


@pytest.fixture(scope="module")
def messages():
    return fluentbit_records()


@pytest.fixture(scope="module")
def wanted(opensearch_url, request, messages):
    """The documents `replay` makes of the fixture files (indexed once for the module)."""
    prefix = f"gst-kafka-replay-{uuid.uuid4().hex[:8]}-"
    replay_into(opensearch_url, prefix)
    docs = comparable(documents(opensearch_url, prefix))
    yield docs
    req = urllib.request.Request(f"{opensearch_url}/{prefix}*?expand_wildcards=all", method="DELETE")
    urllib.request.urlopen(req, timeout=30).close()


def metrics_url(log_path) -> str:
    def found():
        for line in log_path.read_text().splitlines():
            if line.startswith("{") and '"event": "metrics"' in line:
                return json.loads(line)["url"]
        return None

    return wait_until(found, 60, what="the metrics endpoint in the service log")


def test_fixtures_through_kafka_index_the_same_documents_as_replay(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, messages, wanted, tmp_path):
    topic = kafka_topic(partitions=3)
    produce(kafka_bootstrap, topic, messages)
    prefix = index_prefix + "-"
    proc = start_service(service_command(kafka_bootstrap, opensearch_url, topic, prefix, f"{topic}-g"),
                         tmp_path / "service.log")
    try:
        settled(opensearch_url, prefix, wanted, SETTLE_S)
    finally:
        assert stop(proc) == 0, (tmp_path / "service.log").read_text()[-3000:]
    assert committed_offsets(kafka_bootstrap, f"{topic}-g", topic) == end_offsets(kafka_bootstrap, topic)


def test_kill_9_at_random_moments_then_restart_leaves_the_index_of_a_clean_run(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, messages, wanted, tmp_path):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    topic = kafka_topic(partitions=2)
    prefix = index_prefix + "-"
    cmd = service_command(kafka_bootstrap, opensearch_url, topic, prefix, f"{topic}-g", "--max-poll-records", "100",
                          "--commit-interval", "0.2", "--instance-id", "crash-1", "--session-timeout", "10")
    log = tmp_path / "service.log"
    waves = [messages[i * len(messages) // 4:(i + 1) * len(messages) // 4] for i in range(4)]
    kills = 0
    for wave in waves:
        produce(kafka_bootstrap, topic, wave)
        proc = start_service(cmd, log)
        time.sleep(rng.uniform(1.0, 4.0))  # start-up, then somewhere in the middle of the wave
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.wait(30)
    assert kills >= 3, f"seed {seed}: the service ended by itself"
    proc = start_service(cmd, log)
    try:
        settled(opensearch_url, prefix, wanted, SETTLE_S)
    except AssertionError as exc:
        raise AssertionError(f"seed {seed}: {exc}") from None
    finally:
        assert stop(proc) == 0


def test_three_consumers_of_six_partitions_one_stopped_mid_run_index_every_record_once(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, messages, wanted, tmp_path):
    topic = kafka_topic(partitions=6)
    prefix = index_prefix + "-"
    group = f"{topic}-g"
    procs = [start_service(service_command(kafka_bootstrap, opensearch_url, topic, prefix, group,
                                           "--max-poll-records", "200", "--session-timeout", "10"),
                           tmp_path / f"service-{i}.log") for i in range(3)]
    try:
        first, second = split_by_job(messages)
        produce(kafka_bootstrap, topic, first)
        wait_until(lambda: sum(v or 0 for v in committed_offsets(kafka_bootstrap, group, topic).values()) > 0,
                   60, what="a first commit")
        assert stop(procs[1]) == 0
        produce(kafka_bootstrap, topic, second)
        # Job-level records (a diagnosis, a rank's last progress state) are made by whichever consumer
        # sees the job end; the line-level records must be there exactly once, as replay has them.
        got = {}

        def every_record_once():
            nonlocal got
            got = comparable(documents(opensearch_url, prefix))
            return all(set(got.get(k, {})) == set(want) for k, want in wanted.items()) and set(got) == set(wanted)

        try:
            wait_until(every_record_once, SETTLE_S, every=1.0, what="every record")
        except AssertionError:
            raise AssertionError(difference(wanted, got)) from None
        for kind in ("step", "error", "trace"):
            assert got[kind] == wanted[kind], difference({kind: wanted[kind]}, {kind: got[kind]})
        # once every container has gone quiet and flushed, the committed offsets reach the end
        wait_until(lambda: committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic),
                   60, what="every offset committed")
    finally:
        for p in procs:
            assert stop(p) == 0


def test_undecodable_messages_go_to_the_dead_letter_topic_with_reason_and_original_bytes(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, messages, tmp_path):
    topic = kafka_topic(partitions=1)
    dead = f"{topic}-dead"
    bad = [(b"pod-x", b"{not json"), (b"pod-y", b'["a list"]'), (b"pod-z", b'{"stream": "stdout"}')]
    produce(kafka_bootstrap, topic, messages[:50] + bad + messages[50:60])
    log = tmp_path / "service.log"
    proc = start_service(service_command(kafka_bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g"), log)
    try:
        url = metrics_url(log)
        consumer = KafkaConsumer(dead, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=30_000)
        got = []
        for m in consumer:
            got.append(m)
            if len(got) == len(bad):
                break
        consumer.close()
        text = urllib.request.urlopen(url, timeout=10).read().decode()
    finally:
        assert stop(proc) == 0
    assert [(m.key, m.value) for m in got] == bad
    reasons = [dict(m.headers)["gangscope-reason"] for m in got]
    assert reasons == [b"not_json", b"not_an_object", b"no_log_text"]
    assert all(dict(m.headers)["gangscope-topic"] == topic.encode() for m in got)
    assert 'gangscope_dead_letters_total{reason="not_json"} 1.0' in text


def test_sigterm_flushes_commits_and_exits_0_and_metrics_say_what_was_read(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, messages, tmp_path):
    topic = kafka_topic(partitions=1)
    group = f"{topic}-g"
    produce(kafka_bootstrap, topic, messages[:2000])
    log = tmp_path / "service.log"
    proc = start_service(service_command(kafka_bootstrap, opensearch_url, topic, index_prefix + "-", group,
                                         "--commit-interval", "60"), log)
    url = metrics_url(log)
    base = url.rsplit("/", 1)[0]

    def read_all():
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        done = f'gangscope_lines_in_total{{topic="{topic}"}} 2000.0' in text and "records_out_total{" in text
        return text if done else None

    text = wait_until(read_all, 60, what="2000 lines read and their records indexed")
    health = json.loads(urllib.request.urlopen(base + "/healthz", timeout=10).read())
    # with commits 60 s apart, only the stop can have committed
    assert committed_offsets(kafka_bootstrap, group, topic) == {0: None}
    assert stop(proc) == 0
    assert health["ok"] is True and health["opensearch"] == "up"
    assert 'gangscope_records_out_total{kind="step"}' in text
    assert f'gangscope_consumer_lag{{partition="0",topic="{topic}"}} 0.0' in text
    assert "gangscope_sink_latency_seconds_count" in text
    assert "gangscope_open_multiline_records" in text
    committed = committed_offsets(kafka_bootstrap, group, topic)[0]
    assert committed is not None and committed <= 2000
    stopped = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(e.get("event") == "stopped" for e in stopped)


def _backend(client: str) -> str:
    if not _installed(client):
        pytest.skip("confluent-kafka is not installed")
    return client


@pytest.mark.parametrize("client", BACKENDS)
def test_replay_from_kafka_gives_the_records_of_replay_of_the_files(
        kafka_bootstrap, kafka_topic, messages, tmp_path, monkeypatch, client):
    from gangscope.pipeline.run.cli import main

    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_URL", raising=False)  # into folders, to compare

    topic = kafka_topic(partitions=2)
    produce(kafka_bootstrap, topic, messages)
    assert main(["replay", "--from-kafka", topic, "--bootstrap", kafka_bootstrap, "--out", str(tmp_path / "k"),
                 "--no-progress", "--kafka-client", _backend(client)]) == 0
    from kafka_fixtures import FIXTURES

    assert main(["replay", *map(str, FIXTURES), "--out", str(tmp_path / "f"), "--no-progress"]) == 0

    def read(folder, kind):
        out = {}
        for line in (tmp_path / folder / f"{kind}.ndjson").read_text().splitlines():
            d = json.loads(line)
            d.pop("source", None)
            out[d["id"]] = d
        return out

    for kind in ("step", "epoch", "error", "trace", "signal", "diagnosis"):
        assert read("k", kind) == read("f", kind), kind
    # the fixtures have records of these kinds: the comparison above is not of two empty files
    assert [kind for kind in ("step", "epoch", "error", "trace", "diagnosis") if not read("f", kind)] == []
    assert len(read("k", "step")) > 100


@pytest.mark.parametrize("scenario", ["d_preemption", "a_image_pull_backoff"])
def test_events_topic_gives_the_event_records_attempts_and_diagnoses_of_replay_with_events(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, tmp_path, scenario):
    from kafka_fixtures import ROOT

    folder = ROOT / "fixtures" / "gang" / scenario
    event_files = [p for p in (folder / "events.ndjson", folder / "workloads.json") if p.exists()]
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=[folder / "pods"], events=event_files)
    want = comparable(documents(opensearch_url, replay_prefix))
    logs, events = kafka_topic(partitions=2), kafka_topic(partitions=1)
    messages = [(None, line.encode()) for line in (folder / "events.ndjson").read_text().splitlines() if line.strip()]
    if (folder / "workloads.json").exists():
        messages.append((None, (folder / "workloads.json").read_bytes()))
    produce(kafka_bootstrap, events, messages)
    prefix = index_prefix + "-"
    cmd = service_command(kafka_bootstrap, opensearch_url, logs, prefix, f"{logs}-g", "--events-topic", events,
                          "--attempt-grace", "1")
    proc = start_service(cmd, tmp_path / "service.log")
    try:
        # the gang's events first, so that every log line finds its attempt (replay reads them first too)
        wait_until(lambda: len(documents(opensearch_url, prefix).get("event", {})) >= len(want["event"]), 60,
                   what="the events indexed")
        produce(kafka_bootstrap, logs, fluentbit_records([folder / "pods"]))
        settled(opensearch_url, prefix, want, SETTLE_S)
    finally:
        assert stop(proc) == 0


@pytest.mark.parametrize("client", BACKENDS)
def test_replay_from_kafka_reads_only_the_time_or_offset_range(
        kafka_bootstrap, kafka_topic, messages, tmp_path, monkeypatch, client):
    from kafka import KafkaProducer

    from gangscope.pipeline.run.cli import main

    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_URL", raising=False)

    # Kept for good: the messages are stamped in 2023, past the broker's 7-day retention, and a
    # retention check (every 5 minutes) between the produce and a read deleted them all (the first
    # offset became the end: 0 lines read, a CI failure once in ~25 runs)
    topic = kafka_topic(partitions=2, configs={"retention.ms": "-1"})
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    hour = 3_600_000
    for i, (key, value) in enumerate(messages[:1000]):  # 400 lines at 22:13:20, 600 an hour later
        producer.send(topic, key=key, value=value, timestamp_ms=1_700_000_000_000 + (0 if i < 400 else hour))
    producer.flush()
    producer.close()

    def lines(*flags: str) -> int:
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        assert main(["replay", "--from-kafka", topic, "--bootstrap", kafka_bootstrap, "--out", str(out),
                     "--no-progress", "--kafka-client", _backend(client), *flags]) == 0
        return json.loads((out / "summary.json").read_text())["lines"]

    assert lines("--since", "2023-11-14T23:00:00Z") == 600
    assert lines("--until", "2023-11-14T23:00:00Z") == 400
    assert lines("--from-offset", "100", "--to-offset", "200") == 200
