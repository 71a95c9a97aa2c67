"""How long each dashboard panel takes on about a million records in a real OpenSearch node.

Indexes generated records once under an index prefix of their own (kept for the next run:
`--prefix` reuses it, `--drop` deletes it at the end), then asks the dashboard itself (its
Flask app, the same code waitress serves) for every panel page, the page of all panels and
every panel's JSON, in turns, and prints p50 and p95 of each in milliseconds: the time of its
OpenSearch queries, the Python around them and the HTML rendering together (wall), and beside it
OpenSearch's own `took` summed over the target's requests (an `_msearch` its own `took`, over the
searches it ran side by side), which this machine's other work moves less.

The records are shaped like a cluster's week: JOBS jobs of RANKS ranks logging steps (90%),
epochs, errors of every category spread over seven days, stack traces in TRACE_GROUPS
fingerprints, gang events, stragglers, stalls and one diagnosis per attempt.

A static index answers repeated aggregations from OpenSearch's shard request cache; on a cluster
that `consume` writes to, every shard refreshes each second and that cache is empty for most
panel loads. `--no-request-cache` turns the cache off on the bench's indices while it measures
(`index.requests.cache.enable`, restored at the end) and empties it before every timed request
(a search may ask for the cache whatever the setting): the time a live dashboard sees.

    set -a; . /tmp/work/servers.env; set +a      # or: eval "$(services/up opensearch)"
    python -m bench.dashboard_panels                        # 1,000,000 records, 15 turns
    python -m bench.dashboard_panels --prefix bench-panels-1m- --turns 30 --no-request-cache
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Iterator

from opensearchpy import OpenSearch

from gangscope.parsers.records import (
    DiagnosisRecord,
    EpochRecord,
    ErrorRecord,
    EventRecord,
    Record,
    SignalRecord,
    StepRecord,
    TraceRecord,
    stable_id,
)
from gangscope.pipeline.dashboard.app import create_app
from gangscope.pipeline.dashboard.panels import PANELS
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

JOBS = 40
RANKS = 32
TRACE_GROUPS = 300
CATEGORIES = ("cuda_oom", "nccl_timeout", "nccl_error", "storage_io", "python_exception", "dataloader_error",
              "checkpoint_error", "rendezvous_error", "gpu_hardware", "nan_loss")  # SPEC's taxonomy ids
WEEK_S = 7 * 86400
START_S = 1_780_000_000  # 2026-05-28


def iso(seconds: float) -> str:
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((seconds - whole) * 1e6):06d}Z"


def generated(n: int, seed: int = 21) -> Iterator[Record]:
    """`n` records, jobs interleaved as a cluster logs them (deterministic for a seed)."""
    rnd = random.Random(seed)
    steps_per_rank = max(1, int(n * 0.9) // (JOBS * RANKS))
    for i in range(n):
        job_i = i % JOBS
        job = f"team-{job_i % 5}/train-{job_i:03d}"
        attempt = 1 + (i // JOBS) % 2 if job_i % 7 == 0 else 1
        rank = (i // JOBS) % RANKS
        step = (i // (JOBS * RANKS)) + 1
        t = START_S + job_i * (WEEK_S / JOBS) + step * 1.5 + rank * 0.001
        pod = f"train-{job_i:03d}-worker-{rank // 8}"
        common = dict(id=stable_id("bench-panels", job, attempt, rank, i), job=job, attempt=attempt,
                      namespace=job.split("/")[0], pod=pod, container="pytorch", node=f"gpu-node-{job_i}-{rank // 8}",
                      rank=rank, time=iso(t), source=f"/var/log/pods/{pod}/pytorch/0.log", stream="stdout")
        kind = i % 100
        slow = 1.6 if rank == job_i % RANKS else 1.0  # one straggler a job
        if kind < 90:
            yield StepRecord(**common, step=step, total_steps=steps_per_rank, epoch=step / 200, total_epochs=10,
                             loss=3.0 / (1 + step * 0.01) + rnd.random() * 0.02, learning_rate=3e-4,
                             grad_norm=rnd.uniform(0.5, 1.5), throughput=rnd.uniform(3000, 3300) / slow,
                             throughput_unit="tokens/s", step_time_s=rnd.uniform(0.98, 1.06) * slow,
                             metrics={"mfu": 0.41}, dialect="megatron")
        elif kind < 95:
            category = CATEGORIES[rnd.randrange(len(CATEGORIES))]
            yield ErrorRecord(**common, category=category, message=f"{category} on rank {rank}",
                              line=f"[rank{rank}]: RuntimeError: {category} at step {step} <see /fsx/run/{job_i}>")
        elif kind < 97:
            group = rnd.randrange(TRACE_GROUPS)
            yield TraceRecord(**common, exception_type=f"bench.Error{group}", message=f"failure {group} " + "x" * 200,
                              fingerprint=f"fp-{group:04d}", text="Traceback (most recent call last):\n" * 4,
                              line_count=12)
        elif kind < 99:
            yield EpochRecord(**common, epoch=step / 200, total_epochs=10, step=step, total_steps=steps_per_rank,
                              progress=min(1.0, step / steps_per_rank), eta_s=(steps_per_rank - step) * 1.02)
        elif i % 1000 == 999:
            yield SignalRecord(**common, signal="straggler" if rank % 2 else "stall", step=step, value=1.6,
                               baseline=1.0, message=f"rank {rank} slower than its peers")
        else:
            reason = ("Admitted", "Evicted", "Requeued", "Started", "Killing")[rnd.randrange(5)]
            yield EventRecord(**common, reason=reason, type="Normal", object_kind="Workload",
                              object_name=job.split("/")[1], message=f"{reason} by the bench")
    for job_i in range(JOBS):
        job = f"team-{job_i % 5}/train-{job_i:03d}"
        for attempt in (1, 2) if job_i % 7 == 0 else (1,):
            yield DiagnosisRecord(id=stable_id("bench-panels-diagnosis", job, attempt), job=job, attempt=attempt,
                                  namespace=job.split("/")[0], time=iso(START_S + job_i * (WEEK_S / JOBS)),
                                  outcome="failed" if attempt == 1 and job_i % 7 == 0 else "running",
                                  category="cuda_oom" if attempt == 1 and job_i % 7 == 0 else "running",
                                  summary="rank 3 ran out of GPU memory", confidence=0.9)


def load(url: str, prefix: str, n: int) -> None:
    client = indices.connect(url, timeout=300)
    indices.install(client, prefix, indices.IndexSettings(replicas=0))
    start = time.perf_counter()
    with OpenSearchSink(url, prefix=prefix, batch_docs=5000, refresh=True, timeout=300) as sink:
        batch: list[Record] = []
        for r in generated(n):
            batch.append(r)
            if len(batch) == 50_000:
                sink.write(batch)
                batch = []
        sink.write(batch)
    print(f"indexed {n:,} records under {prefix!r} in {time.perf_counter() - start:.0f} s ({sink.stats.failed} failed)")


def count(url: str, prefix: str) -> int:
    client = indices.connect(url, timeout=60)
    try:
        return int(client.count(index=f"{prefix}gangscope-*")["count"])
    except Exception:  # no such index yet
        return 0


class TookMeter:
    """Sums OpenSearch's `took` (ms) of every search and _msearch (its own, over the searches it ran)
    that the dashboard's client sends while it is on."""

    def __init__(self) -> None:
        self.ms = 0

    def __enter__(self) -> "TookMeter":
        self._search, self._msearch = OpenSearch.search, OpenSearch.msearch
        meter = self

        def search(client, *args, **kwargs):
            answer = meter._search(client, *args, **kwargs)
            meter.ms += int(answer.get("took") or 0)
            return answer

        def msearch(client, *args, **kwargs):
            answer = meter._msearch(client, *args, **kwargs)
            meter.ms += int(answer.get("took") or max((r.get("took") or 0 for r in answer.get("responses", [])), default=0))
            return answer

        OpenSearch.search, OpenSearch.msearch = search, msearch
        return self

    def __exit__(self, *exc: object) -> None:
        OpenSearch.search, OpenSearch.msearch = self._search, self._msearch


def measure(url: str, prefix: str, turns: int, cold: bool = False) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """`cold`: the shard request cache is emptied before every timed request (not timed), as a refresh
    of a live index empties it; turning the index setting off alone would not stop a search that asks
    for the cache (request_cache=true) from using it."""
    app = create_app(url, prefix=prefix, refresh_s=0, timeout=120)
    os_client = indices.connect(url, timeout=60)
    client = app.test_client()
    targets = {f"panel/{name}": f"/panel/{name}" for name in PANELS}
    targets.update({f"api/{name}": f"/api/{name}" for name in PANELS})
    targets["index (all panels)"] = "/"
    job = "team-0/train-000"
    targets.update({f"panel/{name}?job": f"/panel/{name}?job={job}" for name in PANELS})
    wall: dict[str, list[float]] = {name: [] for name in targets}
    took: dict[str, list[float]] = {name: [] for name in targets}
    for target in targets.values():  # warm-up: the first query of a kind loads field data
        client.get(target)
    with TookMeter() as meter:
        for _ in range(turns):  # in turns, so that a busy moment of the machine is spread over all
            for name, target in targets.items():
                if cold:
                    os_client.indices.clear_cache(index=f"{prefix}gangscope-*", request=True)
                meter.ms = 0
                start = time.perf_counter()
                response = client.get(target)
                wall[name].append((time.perf_counter() - start) * 1000)
                took[name].append(meter.ms)
                if response.status_code != 200:
                    raise SystemExit(f"{target}: HTTP {response.status_code}")
    return wall, took


def _p(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    if percent == 50:
        return statistics.median(ordered)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("GANGSCOPE_OPENSEARCH_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--prefix", default=None, help="index prefix (default bench-panels-<records>-); reused when filled")
    ap.add_argument("--turns", type=int, default=15)
    ap.add_argument("--drop", action="store_true", help="delete the bench's indices at the end")
    ap.add_argument("--no-request-cache", action="store_true",
                    help="measure with the shard request cache off, as on indices being written to")
    args = ap.parse_args()
    prefix = args.prefix or f"bench-panels-{args.records}-"
    have = count(args.url, prefix)
    if have < args.records:
        load(args.url, prefix, args.records)
    cache = "off" if args.no_request_cache else "on"
    print(f"node {args.url}, prefix {prefix!r}: {count(args.url, prefix):,} documents; {args.turns} turns; "
          f"request cache {cache}; load {os.getloadavg()[0]:.1f}")
    client = indices.connect(args.url, timeout=60)
    if args.no_request_cache:
        client.indices.put_settings(index=f"{prefix}gangscope-*", body={"index.requests.cache.enable": False})
        client.indices.clear_cache(index=f"{prefix}gangscope-*", request=True)
    try:
        wall, took = measure(args.url, prefix, args.turns, cold=args.no_request_cache)
    finally:
        if args.no_request_cache:
            client.indices.put_settings(index=f"{prefix}gangscope-*", body={"index.requests.cache.enable": None})
    print(f"load after: {os.getloadavg()[0]:.1f}")
    print(f"{'target':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'took p50':>9} {'took p95':>9}")
    for name, values in wall.items():
        print(f"{name:28} {_p(values, 50):8.0f} {_p(values, 95):8.0f} {max(values):8.0f} "
              f"{_p(took[name], 50):9.0f} {_p(took[name], 95):9.0f}")
    if args.drop:
        indices.delete_all(indices.connect(args.url), prefix)


if __name__ == "__main__":
    main()
