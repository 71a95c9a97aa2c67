"""The consumer's next bulk request goes out before the one OpenSearch just acknowledged is committed
(its checkpoints saved, its offsets committed, the next marks taken), and the index still ends as
`replay` builds it with every offset committed. Against the real Kafka and OpenSearch, on both
consumer backends.

Done before the next send, that work kept OpenSearch waiting between bulks: at 10,000 lines/s it
idled 6.0 s of 16 under a backlog, 2.6 s of them in marks taken and committed (bench.kafka_consume
--only delay with per-bulk stamps, issue 19)."""

from __future__ import annotations

import json
import threading

import pytest
from structlog.testing import capture_logs

from gangscope.pipeline.run import config
from gangscope.pipeline.run.service import Service
from kafka_backends import kafka_client  # noqa: F401  (the fixture: each server test once per backend)
from kafka_fixtures import (
    ROOT,
    comparable,
    committed_offsets,
    documents,
    end_offsets,
    fluentbit_records,
    produce,
    replay_into,
    settled,
    wait_until,
)

PODS = ROOT / "fixtures" / "gang" / "a_image_pull_backoff" / "pods"
DEADLINE_S = 120  # deadlines for the index to settle, not speed assertions


class CommitsWatched(Service):
    """The service, noting at each commit of marks whether a later bulk was in flight then."""

    def __init__(self, cfg):
        super().__init__(cfg, install_signals=False)
        self.commits_with_a_bulk_in_flight: list[bool] = []

    def _commit_marks(self, marks: dict) -> None:
        if marks:
            self.commits_with_a_bulk_in_flight.append(self.inflight.busy())
        super()._commit_marks(marks)


@pytest.mark.usefixtures("kafka_client")
def test_the_next_bulk_is_sent_before_the_last_is_committed_and_the_index_is_replays(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, kafka_client, tmp_path, caplog):
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=[PODS])
    want = comparable(documents(opensearch_url, replay_prefix))
    topic = kafka_topic(partitions=2)
    messages = fluentbit_records([PODS])
    produce(kafka_bootstrap, topic, messages)
    prefix, group = index_prefix + "-", f"{topic}-g"
    # small polls, a bulk per poll, a commit at every hand-over: many bulks, each with marks
    cfg = config.load({"bootstrap": kafka_bootstrap, "opensearch": opensearch_url, "topics": [topic],
                       "index_prefix": prefix, "group": group, "metrics_port": -1, "kafka_client": kafka_client,
                       "max_poll_records": 3, "flush_interval": 0.001, "commit_interval": 0.001,
                       "attempt_idle": 3, "flush_idle": 1, "open_wait": 6, "dead_letter_topic": ""}, environ={})
    assert len(messages) > 4 * cfg.max_poll_records
    service = CommitsWatched(cfg)
    exit_code: list[int] = []
    thread = threading.Thread(target=lambda: exit_code.append(service.run()), daemon=True)
    with capture_logs() as logs:
        thread.start()
        try:
            settled(opensearch_url, prefix, want, DEADLINE_S)
            wait_until(lambda: committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic),
                       DEADLINE_S, what="every offset committed")
        finally:
            service.stop()
            thread.join(DEADLINE_S)
    # the service's log where the kafka_client fixture reads which backend it subscribed with
    (tmp_path / "service.log").write_text("".join(json.dumps(e, default=str) + "\n" for e in logs))
    assert not [e for e in logs if e["log_level"] in ("warning", "error")]
    assert "Connection pool is full" not in caplog.text  # urllib3's: the loop and the bulk thread share a client
    assert not thread.is_alive() and exit_code == [0]
    assert any(service.commits_with_a_bulk_in_flight), service.commits_with_a_bulk_in_flight


class _HeldSink:
    """A sink whose flush (on the bulk thread) lasts until `release` is set."""

    def __init__(self):
        self.release = threading.Event()

    def flush(self) -> None:
        self.release.wait(30)


def test_records_waiting_for_the_bulk_in_flight_shorten_the_empty_poll():
    """While records wait for the bulk OpenSearch is indexing, a poll that brings nothing gives up
    after WAITING_POLL_MS, so that they go out once that bulk is acknowledged, not 200 ms later; with
    nothing waiting, or nothing in flight, the loop's poll is as long as it was."""
    from gangscope.pipeline.run import service as service_module
    from gangscope.pipeline.run.delivery import Bulk, BulkInFlight

    cfg = config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1", "topics": ["t"],
                       "metrics_port": -1, "dead_letter_topic": ""}, environ={})
    service = Service(cfg, install_signals=False)
    sink = _HeldSink()
    service.inflight = BulkInFlight(sink)
    try:
        assert service._poll_wait(200) == 200  # nothing in flight
        service.inflight.start(Bulk({"tp": ["a record"]}))
        assert service._poll_wait(200) == 200  # in flight, nothing waiting for it
        service.pending = {"tp": []}
        assert service._poll_wait(200) == 200  # a partition with nothing waiting
        service.pending = {"tp": ["the next record"]}
        assert service._poll_wait(200) == service_module.WAITING_POLL_MS < 200
        assert service._poll_wait(5) == 5
        service.pending, service.pending_free = {}, ["a diagnosis"]
        assert service._poll_wait(200) == service_module.WAITING_POLL_MS
        sink.release.set()
        assert service.inflight.done(timeout=30) is not None
        assert service._poll_wait(200) == 200  # acknowledged: the records go out in this cycle
    finally:
        sink.release.set()
        service.inflight.close()
