"""Bulk throughput of the OpenSearch sink into a real node (documents/s), with its own synthetic records.

Records are built before the clock starts (step-heavy, as a training job's logs are: per 100
records 90 step, 6 error, 2 trace, 2 epoch). The floor is the same documents sent as prebuilt
bulk bodies straight through the transport, so the ratio shows what the sink itself costs.
Everything lives under a prefix of its own that is deleted at the end.

    eval "$(services/up opensearch)"
    python -m bench.bulk_opensearch                       # 200k documents
    python -m bench.bulk_opensearch --docs 50000 --batch-docs 5000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from gangscope.parsers.records import EpochRecord, ErrorRecord, Record, StepRecord, TraceRecord, encode, stable_id
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

TRACE = """Traceback (most recent call last):
  File "/workspace/train.py", line 187, in main
    loss.backward()
  File "/usr/local/lib/python3.11/site-packages/torch/_tensor.py", line 581, in backward
    torch.autograd.backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB"""


def synthetic(n: int, ranks: int = 64, seed: int = 7) -> list[Record]:
    rnd = random.Random(seed)
    out: list[Record] = []
    for i in range(n):
        rank = i % ranks
        step = i // ranks + 1
        pod = f"llama-70b-worker-{rank}"
        t = f"2026-03-02T{10 + step // 3600 % 10:02d}:{step // 60 % 60:02d}:{step % 60:02d}.{rnd.randrange(10**9):09d}Z"
        common = dict(id=stable_id("bench", pod, i), job="team-a/llama-70b", namespace="team-a", pod=pod,
                      container="pytorch", node=f"gpu-node-{rank // 8}", rank=rank, time=t,
                      source=f"/var/log/pods/team-a_{pod}_uid/pytorch/0.log", stream="stdout", seq=0)
        kind = i % 100
        if kind < 90:
            out.append(StepRecord(**common, step=step, total_steps=100_000, epoch=step / 5000,
                                  loss=2.5 - step * 1e-5 + rnd.random() * 0.01, learning_rate=3e-4,
                                  grad_norm=rnd.uniform(0.5, 1.5), throughput=rnd.uniform(3000, 3300),
                                  throughput_unit="tokens/s", step_time_s=rnd.uniform(0.98, 1.06),
                                  metrics={"mfu": 0.41, "tflops": 152.3, "train.tokens": 4096.0}, dialect="megatron"))
        elif kind < 96:
            out.append(ErrorRecord(**common, category="storage_io", message="Stale file handle",
                                   line=f"OSError: [Errno 116] Stale file handle: '/fsx/data/shard-{step % 997:05d}.bin'"))
        elif kind < 98:
            out.append(TraceRecord(**common, exception_type="torch.OutOfMemoryError",
                                   message="CUDA out of memory.", fingerprint="fp-oom", text=TRACE, line_count=7))
        else:
            out.append(EpochRecord(**common, epoch=step / 5000, total_epochs=20, step=step, total_steps=100_000,
                                   progress=step / 100_000, eta_s=(100_000 - step) * 1.02))
    return out


def floor(url: str, prefix: str, records: list[Record], batch: int) -> float:
    """Seconds to send the same documents as prebuilt bulk bodies (no batching logic, no result checks)."""
    client = indices.connect(url, timeout=120)
    bodies = []
    for i in range(0, len(records), batch):
        lines = []
        for r in records[i:i + batch]:
            lines.append(json.dumps({"index": {"_index": indices.alias_name(r.kind, prefix), "_id": r.id}}))
            lines.append(encode(r).decode())
        bodies.append("\n".join(lines) + "\n")
    start = time.perf_counter()
    for body in bodies:
        client.transport.perform_request("POST", "/_bulk", body=body, params={"filter_path": "errors"})
    client.indices.refresh(index=f"{prefix}gangscope-*")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("GANGSCOPE_OPENSEARCH_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--batch-docs", type=int, default=2000)
    ap.add_argument("--batch-bytes", type=int, default=8 << 20)
    args = ap.parse_args()
    prefix = f"bench-{os.getpid()}-"
    records = synthetic(args.docs)
    size = sum(len(encode(r)) for r in records)
    client = indices.connect(args.url, timeout=120)
    # Fresh indices for each run, so both create documents (an overwrite costs the server more).
    floor_prefix = prefix + "floor-"
    try:
        for p in (prefix, floor_prefix):
            indices.install(client, p, indices.IndexSettings(replicas=0))
        floor_s = floor(args.url, floor_prefix, records, args.batch_docs)
        start = time.perf_counter()
        with OpenSearchSink(args.url, prefix=prefix, batch_docs=args.batch_docs, batch_bytes=args.batch_bytes,
                            refresh=True, timeout=120) as sink:
            sink.write(records)
        sink_s = time.perf_counter() - start
    finally:
        for p in (prefix, floor_prefix):
            indices.delete_all(client, p)
    stats = sink.stats
    print(f"node        {args.url} (OpenSearch {client.info()['version']['number']})")
    print(f"documents   {len(records):,} ({size / 1e6:.1f} MB of JSON; {dict(sorted(stats.written.items()))})")
    print(f"floor       {len(records) / floor_s:>10,.0f} docs/s  {size / 1e6 / floor_s:6.1f} MB/s  (prebuilt bodies)")
    print(f"sink        {len(records) / sink_s:>10,.0f} docs/s  {size / 1e6 / sink_s:6.1f} MB/s  "
          f"ratio to floor {floor_s / sink_s:.2f}  ({stats.batches} batches of <= {args.batch_docs}, "
          f"{stats.retries} retried, {stats.failed} failed)")


if __name__ == "__main__":
    main()
