"""OpenSearch stopped for 30 s under a running `gangscope consume`: consumption pauses, no offset is
committed, and once OpenSearch is back the index is complete. The test stops an OpenSearch of its
own (services/up with another port and run folder), never the shared one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from kafka_fixtures import (
    comparable,
    committed_offsets,
    difference,
    documents,
    end_offsets,
    fluentbit_records,
    free_ports,
    produce,
    replay_into,
    service_command,
    split_by_job,
    start_service,
    wait_until,
)

ROOT = Path(__file__).resolve().parent.parent
OUTAGE_S = 30


class PrivateOpenSearch:
    """An OpenSearch node of this test's own, started and stopped with services/up and services/down."""

    def __init__(self):
        self.run_dir = Path(tempfile.mkdtemp(prefix="gangscope-outage-"))
        http, transport = free_ports(2)
        self.env = dict(os.environ, GANGSCOPE_OPENSEARCH_PORT=str(http),
                        GANGSCOPE_OPENSEARCH_TRANSPORT_PORT=str(transport), GANGSCOPE_SERVICES_RUN=str(self.run_dir))
        self.env.pop("GANGSCOPE_OPENSEARCH_URL", None)
        self.url = None

    def _script(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "services" / args[0]), *args[1:]], env=self.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=900)

    def up(self) -> str:
        done = self._script("up", "opensearch")
        if done.returncode != 0:
            pytest.fail(f"services/up opensearch (private, for the outage) failed:\n{done.stderr[-2000:]}")
        self.url = dict(line.partition("=")[::2] for line in done.stdout.splitlines())["GANGSCOPE_OPENSEARCH_URL"]
        return self.url

    def down(self) -> None:
        done = self._script("down", "opensearch")
        assert done.returncode == 0, done.stderr

    def remove(self) -> None:
        self._script("down", "--wipe", "opensearch")
        shutil.rmtree(self.run_dir, ignore_errors=True)


@pytest.fixture
def private_opensearch(kafka_bootstrap):
    node = PrivateOpenSearch()
    try:
        node.up()
        yield node
    finally:
        node.remove()


def test_opensearch_stopped_for_30_s_mid_run_then_started_loses_nothing(
        kafka_bootstrap, kafka_topic, private_opensearch, tmp_path):
    url = private_opensearch.url
    tag = uuid.uuid4().hex[:8]
    replay_into(url, f"replay-{tag}-")
    wanted = comparable(documents(url, f"replay-{tag}-"))
    messages = fluentbit_records()
    topic = kafka_topic(partitions=2)
    group = f"{topic}-g"
    log = tmp_path / "service.log"
    first, second = split_by_job(messages)
    produce(kafka_bootstrap, topic, first)
    proc = start_service(service_command(kafka_bootstrap, url, topic, f"kafka-{tag}-", group,
                                         "--backoff-max", "2", "--opensearch-timeout", "5"), log)
    try:
        wait_until(lambda: committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic),
                   90, what="the first jobs committed")
        private_opensearch.down()
        produce(kafka_bootstrap, topic, second)
        before = committed_offsets(kafka_bootstrap, group, topic)
        time.sleep(OUTAGE_S)
        assert proc.poll() is None, log.read_text()[-3000:]
        assert committed_offsets(kafka_bootstrap, group, topic) == before  # nothing committed while down
        health = _healthz(log)
        assert health["opensearch"] == "unreachable" and health["ok"] is False
        private_opensearch.up()
        got = {}

        def complete():
            nonlocal got
            got = comparable(documents(url, f"kafka-{tag}-"))
            return got == wanted

        try:
            wait_until(complete, 120, every=1.0, what="the index to equal replay's")
        except AssertionError:
            raise AssertionError(difference(wanted, got)) from None
        wait_until(lambda: committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic),
                   60, what="every offset committed")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    events = [json.loads(line).get("event") for line in log.read_text().splitlines() if line.startswith("{")]
    assert "opensearch unavailable: consumption paused, nothing committed" in events
    assert "opensearch reachable again: consumption resumed" in events


def _healthz(log: Path) -> dict:
    for line in log.read_text().splitlines():
        if line.startswith("{") and '"event": "metrics"' in line:
            url = json.loads(line)["url"].rsplit("/", 1)[0] + "/healthz"
            try:
                return json.loads(urllib.request.urlopen(url, timeout=10).read())
            except urllib.error.HTTPError as e:
                return json.loads(e.read())
    raise AssertionError("no metrics line in the service log")
