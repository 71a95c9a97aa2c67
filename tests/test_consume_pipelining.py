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
        self.checkpoint_threads: list[str] = []  # the thread of each checkpoint save

    def _connect_sink(self) -> bool:
        ok = super()._connect_sink()
        if ok and self.store is not None:
            save = self.store.save_many

            def noted(states):
                self.checkpoint_threads.append(threading.current_thread().name)
                save(states)

            self.store.save_many = noted
        return ok

    def _commit_marks(self, marks: dict, bulk=None) -> None:
        if marks:
            self.commits_with_a_bulk_in_flight.append(self.inflight.busy())
        super()._commit_marks(marks, bulk)


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
    # a bulk's checkpoints saved by the bulk thread once OpenSearch acknowledged it, not by the loop
    assert any(name.startswith("gangscope-bulk") for name in service.checkpoint_threads), service.checkpoint_threads


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


class _Sink:
    """A sink whose flush (on the bulk thread) raises `fails`, if set."""

    def __init__(self, fails: BaseException | None = None):
        self.fails = fails

    def flush(self) -> None:
        if self.fails is not None:
            raise self.fails


@pytest.mark.parametrize("flush_fails, save_fails", [(False, False), (True, False), (False, True)])
def test_a_bulks_checkpoints_are_saved_on_its_thread_once_it_is_acknowledged(flush_fails, save_fails):
    """BulkInFlight.save_after: the marks taken after the bulk started are saved on the bulk thread
    after its flush, and only when the flush went through; what the save raises is the bulk's
    save_error, for the loop to commit nothing of it."""
    from gangscope.pipeline.run.delivery import Bulk, BulkInFlight
    from gangscope.pipeline.sinks.indices import OpenSearchError

    inflight = BulkInFlight(_Sink(OpenSearchError("down") if flush_fails else None))
    calls: list[tuple[str, dict]] = []

    def save(marks):
        calls.append((threading.current_thread().name, marks))
        if save_fails:
            raise OpenSearchError("checkpoint refused")
        return {tp: 7 for tp in marks}

    bulk = Bulk({"tp": ["a record"]})
    try:
        inflight.start(bulk)
        bulk.marks = {"tp": "its mark"}
        inflight.save_after(bulk, save)
        assert inflight.done(timeout=30) is bulk and not inflight.busy()
    finally:
        inflight.close()
    if flush_fails:
        assert calls == [] and bulk.saved is None and bulk.save_error is None
        return
    assert [(name.startswith("gangscope-bulk"), marks) for name, marks in calls] == [(True, {"tp": "its mark"})]
    if save_fails:
        assert bulk.saved is None and str(bulk.save_error) == "checkpoint refused"
    else:
        assert bulk.saved == {"tp": 7} and bulk.save_error is None


def test_a_poll_is_flushed_at_once_when_every_partition_is_read_to_its_end():
    """Under a backlog (a log partition behind the end its last fetch saw) records wait for the next
    polls' up to flush_interval; caught up, the poll's records go at once, also while polls keep
    bringing lines (a steady stream): before, only a poll that read nothing was caught up."""
    from gangscope.pipeline.run.partition_restore import new_partition_state

    cfg = config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1", "topics": ["t"],
                       "metrics_port": -1, "dead_letter_topic": "", "flush_interval": 0.25}, environ={})
    service = Service(cfg, install_signals=False)
    service.last_flush = 100.0
    a, b = (new_partition_state(False, service.attempt_of, None) for _ in range(2))
    service.states = {"a": a, "b": b}
    a.next_offset, b.next_offset = 50, 70
    a.caught_up_since, b.caught_up_since = 100.0, None  # b behind
    assert service._gather_more(read=300, waiting=200, now=100.1)
    assert not service._gather_more(read=300, waiting=200, now=100.3)  # flush_interval is over
    assert not service._gather_more(read=300, waiting=6000, now=100.1)  # enough for a bulk
    assert not service._gather_more(read=0, waiting=200, now=100.1)  # nothing more came
    b.caught_up_since = 100.05
    assert not service._gather_more(read=300, waiting=200, now=100.1)  # steady stream, caught up
    b.next_offset, b.caught_up_since = None, None  # read nothing of b yet: no end to be behind
    assert not service._gather_more(read=300, waiting=200, now=100.1)
