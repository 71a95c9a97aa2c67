"""Job metrics for Prometheus, derived from the records `gangscope consume` indexed.

Beside the service's own counters (service_metrics.py), /metrics carries what the logs say
about each training job attempt, for the alerts people write on Grafana:

| metric | labels | what |
| --- | --- | --- |
| `gangscope_job_last_step` | job, attempt | the largest step logged |
| `gangscope_job_loss` | job, attempt | the loss of the newest step record that has one |
| `gangscope_job_step_time_seconds` | job, attempt | the step time of the newest step record that has one |
| `gangscope_job_throughput` | job, attempt, unit | the throughput of the newest step record that has one |
| `gangscope_job_last_progress_timestamp_seconds` | job, attempt | the log time of the newest step record (alert on `time() - x`) |
| `gangscope_job_seconds_since_progress` | job, attempt | the same, as seconds before the scrape |
| `gangscope_job_errors_total` | job, attempt, category | error records by category (SPEC's taxonomy) |
| `gangscope_job_stragglers` | job, attempt | ranks the pipeline found slower than their peers |
| `gangscope_job_stalls_total` | job, attempt | stall signals (no new step for far longer than usual) |
| `gangscope_job_attempt_outcome` | job, attempt, outcome, category | 1 for the attempt's diagnosis (failed, evicted, succeeded, running) |
| `gangscope_job_evictions_total` | job | attempts diagnosed `evicted` |
| `gangscope_job_requeues_total` | job | attempts after the first (each one a requeue) |
| `gangscope_job_attempts_tracked` | | attempts with series on this page |
| `gangscope_job_attempts_dropped_total` | | attempts dropped to stay within the limits below |

Cardinality is bounded: an attempt whose diagnosis says it ended (failed, evicted, succeeded)
is retired: its progress and error series go, its outcome, stragglers and stalls (stragglers
are found when an attempt ends) stay, among the newest
`max_ended` ended attempts. At most `max_live` attempts that have not ended are tracked; past
that the one updated longest ago is dropped (counted in
`gangscope_job_attempts_dropped_total`). A job's eviction and requeue counts go with its
last attempt. Labels are the job (`namespace/name`), the attempt number, a category from a
fixed taxonomy, an outcome from four, a throughput unit: nothing from a free-text log line.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from gangscope.parsers import times

MAX_LIVE = 1000
MAX_ENDED = 1000
ENDED = ("failed", "evicted", "succeeded")


@dataclass
class AttemptSeries:
    """What the records of one job attempt said last."""

    last_step: float | None = None
    loss: float | None = None
    step_time_s: float | None = None
    throughput: float | None = None
    throughput_unit: str | None = None
    progress_at: float | None = None  # log time of the newest step record, epoch seconds
    errors: dict[str, int] = field(default_factory=dict)
    stragglers: set[Any] = field(default_factory=set)
    stalls: int = 0


@dataclass
class EndedAttempt:
    """What stays of an attempt once its diagnosis says it ended (stragglers are found at the end)."""

    outcome: str
    category: str
    stragglers: set[Any] = field(default_factory=set)
    stalls: int = 0


class JobMetrics:
    """A Prometheus collector of per-job-attempt gauges, fed with indexed records (`observe`)."""

    def __init__(self, max_live: int = MAX_LIVE, max_ended: int = MAX_ENDED) -> None:
        self.max_live, self.max_ended = max_live, max_ended
        self._lock = threading.Lock()
        self._live: OrderedDict[tuple[str, int], AttemptSeries] = OrderedDict()  # least recently updated first
        self._ended: OrderedDict[tuple[str, int], EndedAttempt] = OrderedDict()  # oldest first
        self._running: dict[tuple[str, int], str] = {}  # attempts diagnosed running: their category
        self._evicted: dict[str, set[int]] = {}
        self._attempts: dict[str, int] = {}  # job -> the largest attempt number seen
        self.dropped = 0

    def observe(self, records: Iterable[Any]) -> None:
        """Take what OpenSearch acknowledged (records of every kind; other kinds are ignored).

        A bulk holds each partition's records in order, so the step and error records of one attempt
        come in runs: its series is found (made, moved to the newest end, its attempt number noted)
        once a run, not once a record. The same as once a record: nothing else touches the series
        within a run (a diagnosis or a signal ends the run). (The realistic corpus's 67k records of
        a replay, in bulks of 5,000: 0.17-0.22 -> 0.09-0.10 s CPU; it was ~3 % of the consumer's CPU
        in the throughput bench. tests/test_job_metrics.py: the same page as record by record.)"""
        with self._lock:
            run, series = None, None  # the attempt of the run and its series
            # with max_live 0 a new series is dropped as soon as it is made: no run then
            runs = self.max_live >= 1
            ended, step = self._ended, self._step
            for r in records:
                kind = r.kind
                if kind == "step" or kind == "error":
                    job = getattr(r, "job", None)
                    if not job:
                        continue
                    key = (job, int(getattr(r, "attempt", None) or 1))
                    if key != run:
                        if key in ended:
                            continue
                        attempt = key[1]
                        self._attempts[job] = max(self._attempts.get(job, 0), attempt)
                        series = self._series(job, attempt)
                        run = key if runs else None
                    if kind == "step":
                        step(series, r)
                    else:
                        errors = series.errors
                        errors[r.category] = errors.get(r.category, 0) + 1
                    continue
                if kind != "diagnosis" and kind != "signal":
                    continue
                job = getattr(r, "job", None)
                if not job:
                    continue
                run = None  # a diagnosis moves or retires series, a signal may make one
                attempt = int(getattr(r, "attempt", None) or 1)
                if kind == "diagnosis":
                    self._diagnosis(job, attempt, r)
                elif (job, attempt) in ended:  # a signal found at the attempt's end
                    self._signal(ended[(job, attempt)], r)
                else:
                    self._attempts[job] = max(self._attempts.get(job, 0), attempt)
                    self._signal(self._series(job, attempt), r)

    @staticmethod
    def _signal(into: AttemptSeries | EndedAttempt, r: Any) -> None:
        if r.signal == "straggler":
            into.stragglers.add((r.pod, r.rank))
        elif r.signal == "stall":
            into.stalls += 1

    def _series(self, job: str, attempt: int) -> AttemptSeries:
        key = (job, attempt)
        series = self._live.get(key)
        if series is None:
            series = self._live[key] = AttemptSeries()
            while len(self._live) > self.max_live:
                old, _ = self._live.popitem(last=False)
                self._running.pop(old, None)
                self.dropped += 1
                self._forget_job(old[0])
        else:
            self._live.move_to_end(key)
        return series

    @staticmethod
    def _step(series: AttemptSeries, r: Any) -> None:
        if r.step is not None and (series.last_step is None or r.step > series.last_step):
            series.last_step = r.step
        at = times.seconds(r.time) if r.time else None
        newer = at is None or series.progress_at is None or at >= series.progress_at
        if at is not None and (series.progress_at is None or at > series.progress_at):
            series.progress_at = at
        if not newer:  # an older record, read late: its values are not the latest
            return
        if r.loss is not None:
            series.loss = r.loss
        if r.step_time_s is not None:
            series.step_time_s = r.step_time_s
        if r.throughput is not None:
            series.throughput, series.throughput_unit = r.throughput, r.throughput_unit

    def _diagnosis(self, job: str, attempt: int, r: Any) -> None:
        self._attempts[job] = max(self._attempts.get(job, 0), attempt)
        if r.outcome == "evicted":
            self._evicted.setdefault(job, set()).add(attempt)
        if r.outcome not in ENDED:  # running: its outcome beside its progress
            self._series(job, attempt)
            self._ended.pop((job, attempt), None)
            self._running[(job, attempt)] = r.category
            return
        live = self._live.pop((job, attempt), None)  # retired: the outcome (and signals) say the rest
        self._running.pop((job, attempt), None)
        ended = self._ended.get((job, attempt)) or EndedAttempt(r.outcome, r.category)
        ended.outcome, ended.category = r.outcome, r.category
        if live is not None:
            ended.stragglers |= live.stragglers
            ended.stalls += live.stalls
        self._ended[(job, attempt)] = ended
        self._ended.move_to_end((job, attempt))
        while len(self._ended) > self.max_ended:
            old, _ = self._ended.popitem(last=False)
            self.dropped += 1
            self._forget_job(old[0])

    def _forget_job(self, job: str) -> None:
        """A job's own counts go when none of its attempts is left."""
        if any(k[0] == job for k in self._live) or any(k[0] == job for k in self._ended):
            return
        self._evicted.pop(job, None)
        self._attempts.pop(job, None)
        for key in [k for k in self._running if k[0] == job]:
            self._running.pop(key)

    def collect(self):
        """The metric families, as prometheus_client asks a collector at each scrape."""
        now = time.time()
        ja = ["job", "attempt"]
        g = {name: GaugeMetricFamily(f"gangscope_job_{name}", doc, labels=labels) for name, doc, labels in (
            ("last_step", "the largest step logged by the job attempt", ja),
            ("loss", "the loss of the attempt's newest step record that has one", ja),
            ("step_time_seconds", "the step time of the attempt's newest step record that has one", ja),
            ("throughput", "the throughput of the attempt's newest step record that has one", ja + ["unit"]),
            ("last_progress_timestamp_seconds", "log time of the attempt's newest step record (unix seconds)", ja),
            ("seconds_since_progress", "seconds from the attempt's newest step record to this scrape", ja),
            ("stragglers", "ranks of the attempt the pipeline found slower than their peers", ja),
            ("attempt_outcome", "1 for the attempt's diagnosis: outcome and category", ja + ["outcome", "category"]),
        )}
        errors = CounterMetricFamily("gangscope_job_errors", "error records of the job attempt by category",
                                     labels=ja + ["category"])
        stalls = CounterMetricFamily("gangscope_job_stalls", "stall signals of the job attempt", labels=ja)
        evictions = CounterMetricFamily("gangscope_job_evictions", "attempts of the job diagnosed evicted", labels=["job"])
        requeues = CounterMetricFamily("gangscope_job_requeues", "attempts of the job after its first", labels=["job"])
        with self._lock:
            for (job, attempt), s in self._live.items():
                labels = [job, str(attempt)]
                for name, v in (("last_step", s.last_step), ("loss", s.loss), ("step_time_seconds", s.step_time_s),
                                ("last_progress_timestamp_seconds", s.progress_at)):
                    if v is not None:
                        g[name].add_metric(labels, float(v))
                if s.throughput is not None:
                    g["throughput"].add_metric(labels + [s.throughput_unit or ""], float(s.throughput))
                if s.progress_at is not None:
                    g["seconds_since_progress"].add_metric(labels, max(0.0, now - s.progress_at))
                if s.stragglers:
                    g["stragglers"].add_metric(labels, float(len(s.stragglers)))
                for category, n in sorted(s.errors.items()):
                    errors.add_metric(labels + [category], float(n))
                if s.stalls:
                    stalls.add_metric(labels, float(s.stalls))
            for (job, attempt), category in self._running.items():
                g["attempt_outcome"].add_metric([job, str(attempt), "running", category], 1.0)
            for (job, attempt), e in self._ended.items():
                labels = [job, str(attempt)]
                g["attempt_outcome"].add_metric(labels + [e.outcome, e.category], 1.0)
                if e.stragglers:
                    g["stragglers"].add_metric(labels, float(len(e.stragglers)))
                if e.stalls:
                    stalls.add_metric(labels, float(e.stalls))
            for job, last in self._attempts.items():
                evictions.add_metric([job], float(len(self._evicted.get(job, ()))))
                requeues.add_metric([job], float(max(0, last - 1)))
            tracked = GaugeMetricFamily("gangscope_job_attempts_tracked", "job attempts with series on this page",
                                        value=len(self._live) + len(self._ended))
            dropped = CounterMetricFamily("gangscope_job_attempts_dropped",
                                          "job attempts dropped to stay within the limits", value=self.dropped)
        yield from g.values()
        yield from (errors, stalls, evictions, requeues, tracked, dropped)

    def describe(self):
        return []  # no fixed list: the families are made at each scrape
