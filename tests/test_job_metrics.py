"""Job metrics on `gangscope consume`'s /metrics (pipeline/run/job_metrics.py): per job attempt what
the logs said last, read back with prometheus_client's own parser; the series of an attempt that
ended retired, the number of attempts bounded; and the real service on Kafka and OpenSearch."""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gangscope.parsers.records import DiagnosisRecord, ErrorRecord, SignalRecord, StepRecord
from gangscope.pipeline.run.job_metrics import JobMetrics

ROOT = Path(__file__).resolve().parent.parent
JOB = "team-a/llama-train"


def samples(collector: JobMetrics) -> dict[tuple, float]:
    """(name, sorted labels) -> value, as a Prometheus server would read the page."""
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def of(found: dict[tuple, float], name: str, **labels) -> float | None:
    return found.get((name, tuple(sorted((k, str(v)) for k, v in labels.items()))))


def step(n: int, t: int, attempt: int = 1, **kw) -> StepRecord:
    return StepRecord(job=JOB, attempt=attempt, rank=0, pod="llama-train-worker-0", step=n,
                      time=f"2026-11-30T04:{t // 60:02d}:{t % 60:02d}Z", **kw)


def test_the_latest_step_loss_step_time_and_throughput_of_each_attempt():
    m = JobMetrics()
    m.observe([step(10, 10, loss=2.5, step_time_s=1.1, throughput=3200.0, throughput_unit="tokens/s"),
               step(20, 20, loss=2.1, step_time_s=1.0),
               step(15, 15, loss=9.9, step_time_s=9.9)])  # an older record read late changes nothing
    found = samples(m)
    assert of(found, "gangscope_job_last_step", job=JOB, attempt=1) == 20
    assert of(found, "gangscope_job_loss", job=JOB, attempt=1) == 2.1
    assert of(found, "gangscope_job_step_time_seconds", job=JOB, attempt=1) == 1.0
    assert of(found, "gangscope_job_throughput", job=JOB, attempt=1, unit="tokens/s") == 3200.0
    assert of(found, "gangscope_job_last_progress_timestamp_seconds", job=JOB, attempt=1) == \
        datetime(2026, 11, 30, 4, 0, 20, tzinfo=timezone.utc).timestamp()
    assert of(found, "gangscope_job_seconds_since_progress", job=JOB, attempt=1) > 0


def test_errors_by_category_stragglers_stalls_evictions_and_requeues():
    m = JobMetrics()
    m.observe([ErrorRecord(job=JOB, attempt=2, category="nccl_timeout", line="[rank1]: Watchdog <b>caught</b>"),
               ErrorRecord(job=JOB, attempt=2, category="nccl_timeout"),
               ErrorRecord(job=JOB, attempt=2, category="cuda_oom"),
               SignalRecord(job=JOB, attempt=2, signal="straggler", pod="w-1", rank=3),
               SignalRecord(job=JOB, attempt=2, signal="stall", pod="w-0", rank=0),
               DiagnosisRecord(job=JOB, attempt=1, outcome="evicted", category="pods_ready_timeout")])
    found = samples(m)
    assert of(found, "gangscope_job_errors_total", job=JOB, attempt=2, category="nccl_timeout") == 2
    assert of(found, "gangscope_job_errors_total", job=JOB, attempt=2, category="cuda_oom") == 1
    assert of(found, "gangscope_job_stragglers", job=JOB, attempt=2) == 1
    assert of(found, "gangscope_job_stalls_total", job=JOB, attempt=2) == 1
    assert of(found, "gangscope_job_attempt_outcome", job=JOB, attempt=1, outcome="evicted",
              category="pods_ready_timeout") == 1
    assert of(found, "gangscope_job_evictions_total", job=JOB) == 1
    assert of(found, "gangscope_job_requeues_total", job=JOB) == 1
    assert not any("caught" in v for _, labels in found for _, v in labels)  # no log text in a label


def test_an_attempt_that_ended_keeps_its_outcome_and_loses_its_other_series():
    m = JobMetrics()
    m.observe([step(10, 10, loss=2.5), ErrorRecord(job=JOB, attempt=1, category="cuda_oom"),
               DiagnosisRecord(job=JOB, attempt=1, outcome="running", category="running")])
    assert of(samples(m), "gangscope_job_attempt_outcome", job=JOB, attempt=1, outcome="running", category="running") == 1
    m.observe([DiagnosisRecord(job=JOB, attempt=1, outcome="failed", category="cuda_oom")])
    found = samples(m)
    assert of(found, "gangscope_job_attempt_outcome", job=JOB, attempt=1, outcome="failed", category="cuda_oom") == 1
    assert of(found, "gangscope_job_attempt_outcome", job=JOB, attempt=1, outcome="running", category="running") is None
    assert not [k for k in found if k[0] in ("gangscope_job_last_step", "gangscope_job_errors_total")]
    m.observe([step(11, 11)])  # a late line of the ended attempt brings nothing back
    assert of(samples(m), "gangscope_job_last_step", job=JOB, attempt=1) is None


def test_the_number_of_attempts_on_the_page_is_bounded_oldest_first():
    m = JobMetrics(max_live=50, max_ended=20)
    for i in range(200):
        job = f"team-a/job-{i:03d}"
        m.observe([StepRecord(job=job, attempt=1, step=1, time="2026-11-30T04:00:00Z")])
        if i % 2:
            m.observe([DiagnosisRecord(job=job, attempt=1, outcome="succeeded", category="success")])
    found = samples(m)
    jobs = {dict(labels)["job"] for _, labels in found if dict(labels).get("job")}
    assert len(jobs) <= 70 and "team-a/job-199" in jobs and "team-a/job-000" not in jobs
    assert of(found, "gangscope_job_attempts_tracked") <= 70
    assert of(found, "gangscope_job_attempts_dropped_total") >= 130


class _RecordByRecord(JobMetrics):
    """The job metrics read one record at a time, each looking its attempt's series up anew (what
    `observe` did before it looked a series up once per run of one attempt's records)."""

    def observe(self, records):
        with self._lock:
            for r in records:
                job = getattr(r, "job", None)
                if not job:
                    continue
                attempt = int(getattr(r, "attempt", None) or 1)
                if r.kind == "diagnosis":
                    self._diagnosis(job, attempt, r)
                elif r.kind == "signal" and (job, attempt) in self._ended:
                    self._signal(self._ended[(job, attempt)], r)
                elif r.kind in ("step", "error", "signal") and (job, attempt) not in self._ended:
                    self._attempts[job] = max(self._attempts.get(job, 0), attempt)
                    series = self._series(job, attempt)
                    if r.kind == "step":
                        self._step(series, r)
                    elif r.kind == "error":
                        series.errors[r.category] = series.errors.get(r.category, 0) + 1
                    else:
                        self._signal(series, r)


def _mixed_stream(rng, n: int) -> list:
    """Records of a few jobs and attempts in runs of one attempt's, broken by the others', with
    diagnoses (running and ended), signals, records without a job, late and timeless steps."""
    out = []
    while len(out) < n:
        job = rng.choice([JOB, "team-b/bert", "team-c/vit", None])
        attempt = rng.choice([1, 1, 2, 3, None, 0])
        for _ in range(rng.randint(1, 12)):
            what = rng.random()
            t = rng.randint(0, 3599)
            if what < 0.5:
                out.append(StepRecord(job=job, attempt=attempt, rank=0, step=rng.randint(0, 500),
                                      time=rng.choice([f"2026-11-30T04:{t // 60:02d}:{t % 60:02d}.{t:04d}Z", None]),
                                      loss=rng.choice([None, rng.random()]), step_time_s=rng.choice([None, 0.5]),
                                      throughput=rng.choice([None, 100.0]), throughput_unit="samples/s"))
            elif what < 0.8:
                out.append(ErrorRecord(job=job, attempt=attempt, category=rng.choice(["nccl_timeout", "cuda_oom"])))
            elif what < 0.9:
                out.append(SignalRecord(job=job, attempt=attempt, signal=rng.choice(["straggler", "stall"]),
                                        pod="w-1", rank=rng.randint(0, 3)))
            else:
                out.append(DiagnosisRecord(job=job, attempt=attempt,
                                           outcome=rng.choice(["running", "failed", "evicted", "succeeded"]),
                                           category=rng.choice(["running", "cuda_oom", "preempted"])))
    return out


def test_a_series_looked_up_once_per_run_gives_the_page_of_one_lookup_per_record():
    import random

    for seed in range(40):
        rng = random.Random(seed)
        limits = rng.choice([(1000, 1000), (2, 1), (1, 1), (0, 0), (0, 2)])
        fast, slow = JobMetrics(*limits), _RecordByRecord(*limits)
        for _ in range(rng.randint(1, 6)):
            batch = _mixed_stream(rng, rng.randint(1, 120))
            fast.observe(batch)
            slow.observe(batch)
        got, want = samples(fast), samples(slow)
        for key in [k for k in want if k[0] == "gangscope_job_seconds_since_progress"]:
            got.pop(key, None), want.pop(key)  # read at each scrape's own time
        assert got == want, seed
        assert fast.dropped == slow.dropped and fast._attempts == slow._attempts, seed


def test_consume_exposes_the_job_metrics_of_the_straggler_capture(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, tmp_path):
    """The real service on the real Kafka and OpenSearch: fixtures/runs/straggler (rank 3 slow at
    every step, one 35 s pause of all) and rank_raises (rank 3 raised KeyError), shipped as Fluent
    Bit records; /metrics scraped and parsed until each attempt's diagnosis is there."""
    from kafka_fixtures import fluentbit_records, produce, service_command, start_service, stop, wait_until

    topic = kafka_topic(partitions=1)
    produce(kafka_bootstrap, topic, fluentbit_records([ROOT / "fixtures/runs/straggler", ROOT / "fixtures/runs/rank_raises"]))
    log = tmp_path / "service.log"
    proc = start_service(service_command(kafka_bootstrap, opensearch_url, topic, index_prefix + "-", f"{topic}-g"), log)
    try:
        def url():
            for line in log.read_text().splitlines():
                if line.startswith("{") and '"event": "metrics"' in line:
                    return json.loads(line)["url"]
            return None

        metrics = wait_until(url, 60, what="the metrics endpoint in the service log")
        seen: list[dict] = []

        def diagnosed():
            text = urllib.request.urlopen(metrics, timeout=10).read().decode()
            found = {(s.name, tuple(sorted(s.labels.items()))): s.value
                     for family in text_string_to_metric_families(text) for s in family.samples}
            seen.append(found)
            outcomes = {dict(k[1])["job"]: dict(k[1]) for k in found if k[0] == "gangscope_job_attempt_outcome"}
            return found if {"team-a/straggler", "team-a/rank-raises"} <= set(outcomes) else None

        found = wait_until(diagnosed, 120, what="both attempts' diagnoses on /metrics")
    finally:
        assert stop(proc) == 0
    assert of(found, "gangscope_job_attempt_outcome", job="team-a/straggler", attempt=1, outcome="succeeded",
              category="success") == 1
    assert of(found, "gangscope_job_attempt_outcome", job="team-a/rank-raises", attempt=1, outcome="failed",
              category="python_exception") == 1
    assert of(found, "gangscope_job_requeues_total", job="team-a/straggler") == 0
    assert of(found, "gangscope_lines_in_total", topic=topic) > 0  # beside the service's own
    # found at the attempt's end, kept with its outcome: rank 3, and the pause of the 4 ranks
    assert of(found, "gangscope_job_stragglers", job="team-a/straggler", attempt=1) == 1
    assert of(found, "gangscope_job_stalls_total", job="team-a/straggler", attempt=1) == 4
    # before its diagnosis retired them, the straggler attempt's live series (scraped every 0.5 s)
    live = [f for f in seen if of(f, "gangscope_job_last_step", job="team-a/straggler", attempt=1) is not None]
    assert live, "no scrape saw the straggler attempt's progress"
    assert of(live[-1], "gangscope_job_last_step", job="team-a/straggler", attempt=1) == 30
    assert of(live[-1], "gangscope_job_step_time_seconds", job="team-a/straggler", attempt=1) > 0
