"""Kafka with SASL/PLAIN: the local broker's SASL_PLAINTEXT listener, whose user is set in a JAAS
configuration (services/conf/kafka/server.properties; test-only credential). The right password
lets `consume` read and index Fluent Bit records and dead-letter over SASL; a wrong one is one line
and exit 2, at once; the password never shows in what gangscope prints.

OpenSearch basic auth and TLS are checked on the client they configure (no TLS node here: the
security plugin is not on Maven Central).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafka_fixtures import (
    ROOT,
    committed_offsets,
    comparable,
    difference,
    documents,
    end_offsets,
    fluentbit_records,
    replay_into,
    service_command,
    stop,
    wait_until,
)

RUN = ROOT / "fixtures" / "runs" / "rank_raises"  # one small run: steps, a traceback, a diagnosis
SETTLE_S = 120  # deadlines for the service, not speed assertions
CLI = [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())"]


def _sasl_flags(user: str) -> list[str]:
    return ["--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-username", user]


def _sasl_client(kafka_sasl) -> dict:
    bootstrap, user, password = kafka_sasl
    return dict(bootstrap_servers=bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                sasl_plain_username=user, sasl_plain_password=password)


def _produce_over_sasl(kafka_sasl, topic: str, messages) -> None:
    producer = KafkaProducer(acks="all", linger_ms=20, **_sasl_client(kafka_sasl))
    for key, value in messages:
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()


def _env(password: str, **more: str) -> dict:
    # the password as the config module recommends: from the environment, not on the command line
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for name in ("GANGSCOPE_SECURITY_PROTOCOL", "GANGSCOPE_SASL_MECHANISM", "GANGSCOPE_SASL_USERNAME"):
        env.pop(name, None)
    return dict(env, GANGSCOPE_SASL_PASSWORD=password, **more)


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    out = open(log, "ab")
    return subprocess.Popen(cmd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env)


@pytest.fixture(scope="module")
def wanted(opensearch_url):
    """What `replay` indexes of the run's files."""
    prefix = f"gst-sasl-replay-{uuid.uuid4().hex[:8]}-"
    replay_into(opensearch_url, prefix, paths=[RUN])
    yield comparable(documents(opensearch_url, prefix))
    req = urllib.request.Request(f"{opensearch_url}/{prefix}*?expand_wildcards=all", method="DELETE")
    urllib.request.urlopen(req, timeout=30).close()


def test_consume_over_sasl_plain_indexes_the_fluent_bit_records_as_replay_does(
        kafka_sasl, kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, wanted, tmp_path):
    bootstrap, user, password = kafka_sasl
    topic = kafka_topic(partitions=1)  # one pod: its lines are in one partition anyway
    _produce_over_sasl(kafka_sasl, topic, fluentbit_records(paths=[RUN]))
    prefix = index_prefix + "-"
    log = tmp_path / "service.log"
    proc = _start(service_command(bootstrap, opensearch_url, topic, prefix, f"{topic}-g", *_sasl_flags(user)),
                  _env(password), log)
    last = {}

    def same():
        nonlocal last
        last = comparable(documents(opensearch_url, prefix))
        return last == wanted

    try:
        try:
            wait_until(same, SETTLE_S, every=1.0, what="the index to equal replay's")
        except AssertionError:
            raise AssertionError(f"{difference(wanted, last)}\n{log.read_text()[-3000:]}") from None
        wait_until(lambda: committed_offsets(kafka_bootstrap, f"{topic}-g", topic) == end_offsets(kafka_bootstrap, topic),
                   60, what="every offset committed")
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]


def test_the_dead_letter_producer_authenticates_with_the_same_settings(
        kafka_sasl, opensearch_url, kafka_topic, index_prefix, tmp_path):
    bootstrap, user, password = kafka_sasl
    topic = kafka_topic(partitions=1)
    bad = [(b"pod-x", b"{not json")]
    _produce_over_sasl(kafka_sasl, topic, fluentbit_records(paths=[RUN])[:3] + bad)
    log = tmp_path / "service.log"
    proc = _start(service_command(bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g", *_sasl_flags(user)),
                  _env(password), log)
    try:
        consumer = KafkaConsumer(f"{topic}-dead", auto_offset_reset="earliest", consumer_timeout_ms=60_000,
                                 **_sasl_client(kafka_sasl))
        got = next(iter(consumer), None)
        consumer.close()
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]
    assert got is not None, log.read_text()[-3000:]
    assert (got.key, got.value, dict(got.headers)["gangscope-reason"]) == (b"pod-x", b"{not json", b"not_json")


def test_a_wrong_password_exits_2_at_once_with_one_line_naming_the_authentication_failure(
        kafka_sasl, opensearch_url, kafka_topic, index_prefix):
    bootstrap, user, _ = kafka_sasl
    wrong = "not-the-password-" + uuid.uuid4().hex[:6]
    topic = kafka_topic()
    # a deadline (kafka-python alone would retry for its 30 s bootstrap timeout, then blame the network)
    done = subprocess.run(service_command(bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g",
                                          *_sasl_flags(user)), env=_env(wrong), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=25)
    said = [line for line in done.stderr.splitlines() if not line.startswith("{")]
    assert done.returncode == 2, done.stderr
    assert len(said) == 1 and "SASL authentication failed for user 'gangscope'" in said[0], done.stderr
    assert bootstrap in said[0] and "Traceback" not in done.stderr
    assert wrong not in done.stderr + done.stdout


def test_replay_from_kafka_with_a_wrong_password_exits_2_with_one_line(kafka_sasl, kafka_topic, tmp_path):
    bootstrap, user, _ = kafka_sasl
    wrong = "not-the-password-" + uuid.uuid4().hex[:6]
    env = _env(wrong, GANGSCOPE_SECURITY_PROTOCOL="SASL_PLAINTEXT", GANGSCOPE_SASL_MECHANISM="PLAIN",
               GANGSCOPE_SASL_USERNAME=user)
    done = subprocess.run([*CLI, "replay", "--from-kafka", kafka_topic(), "--bootstrap", bootstrap,
                           "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=25)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "--from-kafka: " in done.stderr, done.stderr
    assert "SASL authentication failed" in done.stderr and wrong not in done.stderr


def test_a_mechanism_the_listener_does_not_offer_is_named_with_the_ones_it_does(
        kafka_sasl, opensearch_url, kafka_topic, index_prefix):
    bootstrap, user, password = kafka_sasl
    topic = kafka_topic()
    cmd = service_command(bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g", *_sasl_flags(user),
                          "--sasl-mechanism", "SCRAM-SHA-512", "--log-level", "warning")
    done = subprocess.run(cmd, env=_env(password), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=25)
    assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
    assert "does not offer SASL mechanism SCRAM-SHA-512 (it offers PLAIN)" in done.stderr


def test_the_password_is_never_in_the_service_log_even_at_debug(
        kafka_sasl, opensearch_url, kafka_topic, index_prefix, tmp_path):
    bootstrap, user, password = kafka_sasl
    topic = kafka_topic()
    _produce_over_sasl(kafka_sasl, topic, fluentbit_records(paths=[RUN])[:20])
    log = tmp_path / "service.log"
    proc = _start(service_command(bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g",
                                  *_sasl_flags(user), "--log-level", "debug"), _env(password), log)
    try:
        wait_until(lambda: '"event": "partition assigned"' in log.read_text(), SETTLE_S, what="the partition")
        wait_until(lambda: documents(opensearch_url, index_prefix + "-"), SETTLE_S, what="records indexed")
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]
    text = log.read_text()
    starting = next(json.loads(line) for line in text.splitlines() if '"event": "starting"' in line)
    assert starting["sasl_password"] == "***" and starting["sasl_username"] == user
    assert password not in text


# --- OpenSearch: basic auth and TLS reach opensearch-py -----------------------------------------


def test_opensearch_basic_auth_and_tls_settings_reach_the_client(tmp_path):
    from gangscope.pipeline.sinks import indices

    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    client = indices.connect("https://search.example:9201/base", username="gs", password="pw", ca_certs=str(ca))
    conn = client.transport.connection_pool.connection
    assert (conn.host, conn.url_prefix) == ("https://search.example:9201", "/base")
    assert conn.headers["authorization"] == "Basic Z3M6cHc="  # base64 of gs:pw
    assert (conn.pool.ca_certs, conn.pool.cert_reqs) == (str(ca), "CERT_REQUIRED")


def test_opensearch_credentials_in_the_url_are_used_and_kept_out_of_messages():
    from gangscope.pipeline.sinks import indices

    client = indices.connect("https://gs:pw@search.example:9201")
    assert client.transport.connection_pool.connection.headers["authorization"] == "Basic Z3M6cHc="
    assert indices.redact("https://gs:pw@search.example:9201") == "https://search.example:9201"


def test_consume_reads_the_opensearch_credentials_from_the_environment(tmp_path):
    from gangscope.pipeline.run import config

    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = config.load({}, None, {"GANGSCOPE_KAFKA_BOOTSTRAP": "b:9092", "GANGSCOPE_OPENSEARCH_URL": "https://os:9200",
                                 "GANGSCOPE_OPENSEARCH_USERNAME": "gs", "GANGSCOPE_OPENSEARCH_PASSWORD": "pw",
                                 "GANGSCOPE_OPENSEARCH_CA_CERTS": str(ca)})
    assert (cfg.opensearch_username, cfg.opensearch_password, cfg.opensearch_ca_certs) == ("gs", "pw", str(ca))
    assert cfg.public()["opensearch_password"] == "***"
