"""What `gangscope consume` tells Prometheus, and its HTTP endpoint (/metrics, /healthz)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class ServiceMetrics:
    """The service's metrics, in a registry of their own (several services can share a process)."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.lines_in = Counter("gangscope_lines_in", "Kafka messages read", ["topic"], registry=r)
        self.records_out = Counter("gangscope_records_out", "records acknowledged by OpenSearch", ["kind"], registry=r)
        self.dead_letters = Counter("gangscope_dead_letters", "messages sent to the dead-letter topic", ["reason"],
                                    registry=r)
        self.lag = Gauge("gangscope_consumer_lag", "messages behind the end of the partition", ["topic", "partition"],
                         registry=r)
        self.sink_latency = Histogram(
            "gangscope_sink_latency_seconds", "time for OpenSearch to acknowledge one flush", registry=r,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))
        self.open_records = Gauge("gangscope_open_multiline_records",
                                  "multi-line records (tracebacks, CRI partials, blocks) still open", registry=r)
        self.open_records_cut = Counter("gangscope_open_records_cut", "open multi-line records (tracebacks, partial "
                                        "lines, held Trainer logs) closed before their end, their container quiet for "
                                        "open_wait", registry=r)
        self.commits = Counter("gangscope_offset_commits", "offset commits", registry=r)
        self.checkpoints = Counter("gangscope_checkpoints", "partition state checkpoints saved", registry=r)
        self.sink_down = Gauge("gangscope_sink_unavailable", "1 while OpenSearch cannot be reached", registry=r)
        self.sink_retries = Counter("gangscope_sink_retries", "flushes tried again after OpenSearch failed",
                                    registry=r)
        self.sink_throttled = Counter(
            "gangscope_sink_throttled", "documents sent to OpenSearch again after it answered 429 (too many "
            "requests), for the whole bulk request (level=request) or for the document (level=document)", ["level"],
            registry=r)
        self.sink_bulk_splits = Counter(
            "gangscope_sink_bulk_splits", "bulk requests OpenSearch refused whole for their size (413, or 429 of its "
            "indexing memory) and the sink sent again in two halves", registry=r)
        self.commit_failures = Counter("gangscope_offset_commit_failures",
                                       "offset commits that failed (broker or group coordinator unreachable)",
                                       registry=r)
        self.kafka_down = Gauge("gangscope_kafka_unavailable", "1 from a failed offset commit (or, on the confluent "
                                "backend, librdkafka saying every broker is down) to the next commit that goes through",
                                registry=r)
        self.kafka_reconnects = Counter("gangscope_kafka_reconnects",
                                        "times offsets could be committed again after commits had failed", registry=r)
        self.diagnoses = Counter("gangscope_diagnoses", "attempt diagnoses indexed", registry=r)
        self.partitions = Gauge("gangscope_assigned_partitions", "partitions this consumer owns", registry=r)
        self.stage_failures = Counter(
            "gangscope_stage_failures", "units of work that raised and were skipped (a file, a parser on a line, a "
            "record, a job's correlation, an attempt's diagnosis), by stage and exception type", ["stage", "error"],
            registry=r)

        # what the logs say of each job attempt (job_metrics.py documents the names and limits)
        from gangscope.pipeline.run.job_metrics import JobMetrics

        self.jobs = JobMetrics()
        r.register(self.jobs)

    def count_failures(self, failures) -> None:
        """Add a ledger's counts (pipeline.isolation.StageFailures, as taken since the last time)."""
        for entry in failures.summary():
            self.stage_failures.labels(entry["stage"], entry["error"]).inc(entry["count"])

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsServer:
    """/metrics (Prometheus text format) and /healthz (JSON; 200 when healthy, else 503)."""

    def __init__(self, metrics: ServiceMetrics, health: Callable[[], dict], host: str, port: int):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, metrics.render(), CONTENT_TYPE_LATEST)
                elif path == "/healthz":
                    state = health()
                    code = 200 if state.get("ok") else 503
                    self._send(code, json.dumps(state).encode(), "application/json")
                else:
                    self._send(404, b"not found: try /metrics or /healthz\n", "text/plain")

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:  # scrapes are not worth a log line
                pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="gangscope-metrics", daemon=True)
        outer._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
