"""A poll's log messages are curated in slices (service.POLL_SLICE); between two, a bulk OpenSearch
acknowledged meanwhile is followed by the records gathered so far (Service._hand_over_between), as at
the end of a cycle, rather than once the whole poll is curated (a poll of 10,000 messages took
0.2-0.5 s, OpenSearch idle meanwhile: issue 19). Pure: a sink that keeps what it is given, no servers.

What must hold: every record a whole poll gives, once, in its order, whatever was handed over
between slices; each hand-over carries the partition's offset its records reach; nothing is handed
over while a bulk is in flight, a failed one waits to be sent again, the sink is down, or a job is to
be corrected or diagnosed (those deliver synchronously, which polls)."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

from gangscope.parsers.records import encode
from gangscope.pipeline.curate.partition import text_scanner
from gangscope.pipeline.isolation import StageFailures
from gangscope.pipeline.run import config
from gangscope.pipeline.run import service as service_module
from gangscope.pipeline.run.delivery import Bulk, BulkInFlight
from gangscope.pipeline.run.log_messages import curate_log_messages
from gangscope.pipeline.run.partition_restore import new_partition_state
from gangscope.pipeline.run.service import Service
from gangscope.pipeline.sinks.opensearch import SinkStats
from gangscope.pipeline.sources.kafka_client import Message
from kafka.structs import TopicPartition
from kafka_fixtures import fluentbit_records

TP = TopicPartition("pod-logs", 0)


class _KeptSink:
    """What the service writes, kept in order; a flush (on the bulk thread) waits for `release`."""

    def __init__(self):
        self.written: list = []
        self.stats = SinkStats()
        self.release = threading.Event()
        self.release.set()

    def write(self, records) -> None:
        self.written.extend(records)

    def flush(self) -> None:
        self.release.wait(30)


class _Sliced(Service):
    """The service, each bulk in flight acknowledged before the next slice is curated (so that the test
    does not depend on how fast the bulk thread is), noting what each hand-over carried."""

    def __init__(self, cfg):
        super().__init__(cfg, install_signals=False)
        self.handed: list[tuple[int, int | None]] = []  # (records, the partition's next offset)

    def _hand_over_between(self) -> None:
        if self.inflight.busy() and self.sink.release.is_set():
            concurrent.futures.wait([self.inflight._future])
        super()._hand_over_between()

    def _hand_over(self, commit_due: bool) -> None:
        self.handed.append((sum(len(v) for v in self.pending.values()), self.states[TP].next_offset))
        super()._hand_over(commit_due)


def _service(**settings) -> _Sliced:
    cfg = config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1", "topics": ["pod-logs"],
                       "metrics_port": -1, "dead_letter_topic": "", "commit_interval": 1e9, **settings}, environ={})
    service = _Sliced(cfg)
    service.sink = _KeptSink()
    service.inflight = BulkInFlight(service.sink)
    service.sink_ok = True
    service.states = {TP: new_partition_state(False, service.attempt_of, 20_000)}
    return service


def _messages(n: int) -> list[Message]:
    values = [value for _key, value in fluentbit_records()][:n]
    assert len(values) == n
    return [Message(TP[0], TP[1], 1000 + i, value, None) for i, value in enumerate(values)]


def _whole_poll(messages: list[Message]) -> list[bytes]:
    """The records of the messages curated as one batch, by a partition of its own."""
    state = new_partition_state(False, Service(config.load({"bootstrap": "x:1", "opensearch": "http://x:1",
                                                            "topics": ["t"]}, environ={})).attempt_of, 20_000)
    out: list = []
    curate_log_messages(state, messages, out, text_scanner(), StageFailures(), lambda *a: None, 0.0)
    return [encode(r) for r in out]


def test_records_go_out_between_slices_and_none_is_lost_or_repeated():
    messages = _messages(4 * service_module.POLL_SLICE + 37)
    want = _whole_poll(messages)
    assert len(want) > 100
    service = _service(flush_interval=1e-9)  # nothing gathers: every slice's records go once acknowledged
    try:
        service._consume({TP: messages})
        service.inflight.done(timeout=30)
    finally:
        service.inflight.close()
    got = [encode(r) for r in service.sink.written] + [encode(r) for r in service.pending.get(TP, [])]
    assert got == want
    # handed over between the slices (not only at the poll's end), each with the offset its records reach
    assert len(service.handed) == 4, service.handed
    assert [offset for _n, offset in service.handed] == [1000 + k * service_module.POLL_SLICE for k in (1, 2, 3, 4)]
    assert service.states[TP].next_offset == messages[-1].offset + 1


def test_a_backlogs_records_gather_between_slices_as_at_a_polls_end():
    """Under 5,000 records and within flush_interval, the records wait for the next slices (as
    _gather_more lets a backlog's do); past flush_interval they go."""
    messages = _messages(3 * service_module.POLL_SLICE)
    service = _service(flush_interval=3600.0)
    service.last_flush = 1e12  # flush_interval not over
    try:
        service._consume({TP: messages})
    finally:
        service.inflight.close()
    assert service.handed == [] and service.sink.written == []
    assert len(service.pending[TP]) == len(_whole_poll(messages))


@pytest.mark.parametrize("hold", ["in_flight", "retry", "sink_down", "to_correct", "to_analyse"])
def test_nothing_is_handed_over_between_slices_while_the_loop_must_not(hold):
    messages = _messages(3 * service_module.POLL_SLICE)
    service = _service(flush_interval=1e-9)
    try:
        if hold == "in_flight":
            service.sink.release.clear()
            service.inflight.start(Bulk({TopicPartition("other", 0): ["a record"]}))
        elif hold == "retry":
            service.retry = Bulk({TopicPartition("other", 0): ["a record"]})
        elif hold == "sink_down":
            service.sink_ok = False
        else:
            getattr(service, hold).add("team-a/job")
        service._consume({TP: messages})
        assert service.handed == [] and service.sink.written == []
        assert len(service.pending[TP]) == len(_whole_poll(messages))
    finally:
        service.sink.release.set()
        service.inflight.close()
