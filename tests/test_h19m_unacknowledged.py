"""/healthz says how many records the service made that OpenSearch has not acknowledged yet (waiting,
in flight, to send again), and bench.kafka_consume's throughput run ends only once that is 0: a reader
of /metrics cannot tell that a bulk is in flight, and a run whose last bulk took longer than the
second the bench waited for the records out to stay the same ended before it (45,704 and 48,532 of
66,399 records indexed, bench.honest at load 5-9: issue 19). Pure: no servers."""

from __future__ import annotations

import threading

from bench import kafka_consume
from gangscope.pipeline.run import config
from gangscope.pipeline.run.delivery import Bulk, BulkInFlight
from gangscope.pipeline.run.service import Service
from gangscope.pipeline.run.service_metrics import MetricsServer, ServiceMetrics


class _HeldSink:
    def __init__(self):
        self.release = threading.Event()

    def flush(self) -> None:
        self.release.wait(30)


def _service() -> Service:
    cfg = config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1", "topics": ["t"],
                       "metrics_port": -1, "dead_letter_topic": ""}, environ={})
    return Service(cfg, install_signals=False)


def test_health_counts_the_records_not_acknowledged_yet():
    service = _service()
    assert service.health()["unacknowledged"] == 0  # nothing made, no bulk thread yet
    sink = _HeldSink()
    service.inflight = BulkInFlight(sink)
    try:
        assert service.health()["unacknowledged"] == 0
        service.inflight.start(Bulk({"a": ["r1", "r2"], "b": ["r3"]}, ["a diagnosis"]))
        assert service.health()["unacknowledged"] == 4
        service.pending = {"a": ["r4"], "b": []}
        service.pending_free = ["a straggler"]
        service.retry = Bulk({"c": ["r5", "r6"]})
        assert service.health()["unacknowledged"] == 4 + 2 + 2
        sink.release.set()
        assert service.inflight.done(timeout=30) is not None
        service.pending, service.pending_free, service.retry = {"a": []}, [], None
        assert service.health()["unacknowledged"] == 0
    finally:
        sink.release.set()
        service.inflight.close()


def test_the_bench_reads_it_also_from_an_unhealthy_answer():
    said = {"ok": False, "unacknowledged": 7}
    server = MetricsServer(ServiceMetrics(), lambda: said, "127.0.0.1", 0)
    try:
        murl = f"http://127.0.0.1:{server.port}/metrics"
        assert kafka_consume.unacknowledged(murl) == 7  # 503 (not ok): the body still says
        said.update(ok=True, unacknowledged=0)
        assert kafka_consume.unacknowledged(murl) == 0
        del said["unacknowledged"]
        assert kafka_consume.unacknowledged(murl) is None
    finally:
        server.close()
    assert kafka_consume.unacknowledged(murl) is None  # nobody there
