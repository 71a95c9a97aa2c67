"""Size and time of a partition's checkpoint: the snapshot (pipeline/curate/snapshot.py) of a
partition holding many containers, each in the middle of a traceback and of a progress bar.

Each container has written a traceback's header and `--frames` frame lines (the trace is open:
its exception line has not come), a tqdm bar state on stderr and a step line on stdout (steps
pending, ranks' progress), as a crash caught mid-print across a whole job would leave it.

    python -m bench.snapshot_bench --containers 1000
    python -m bench.snapshot_bench --containers 1000 --pickle-from 6347428

`--pickle-from COMMIT` also times the pickled checkpoints of that commit (its
pipeline/run/checkpoint.py, read from git history and run on the same partition), for comparison.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
import types
from pathlib import Path

from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate import partition, snapshot
from gangscope.pipeline.run import checkpoint
from gangscope.pipeline.sources import kafka as ksrc

ROOT = Path(__file__).resolve().parent.parent


def envelopes(containers: int, frames: int) -> list:
    """(offset, envelope) pairs: per container a step line, a bar state, an open traceback."""
    values = []
    for n in range(containers):
        kube = {"namespace_name": "team-a", "pod_name": f"llama-train-worker-{n}", "pod_id": f"uid-{n:06d}",
                "container_name": "pytorch", "labels": {"training.kubeflow.org/job-name": "llama-train"}}

        def line(t: float, text: str, stream: str = "stderr") -> bytes:
            return json.dumps({"time": f"2024-05-01T12:{int(t) // 60:02d}:{t % 60:09.6f}Z", "stream": stream,
                               "_p": "F", "log": text, "kubernetes": kube}).encode()

        values.append(line(10.0, f"[rank{n}]: step 120/1000 loss 2.{n % 10} lr 3.0e-4 grad_norm 0.8", "stdout"))
        values.append(line(10.2, "\r 12%|█▏        | 120/1000 [01:10<08:34,  1.71it/s]"))
        values.append(line(11.0, f"[rank{n}]:Traceback (most recent call last):"))
        for f in range(frames):
            values.append(line(11.0 + f / 1e5, f'[rank{n}]:  File "/opt/conda/lib/python3.11/site-packages/torch/nn/'
                                                f'modules/module_{f}.py", line {100 + f}, in _call_impl'))
            values.append(line(11.0 + f / 1e5, f"[rank{n}]:    return forward_call(*args, **kwargs)"))
    return [(i, ksrc.decode_log(v)) for i, v in enumerate(values)]


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()  # the garbage of the previous run is not this one's
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def pickled_checkpoints(commit: str) -> types.ModuleType:
    """The checkpoint module of `commit`, from git history (it pickled the partition)."""
    source = subprocess.run(["git", "show", f"{commit}:pipeline/run/checkpoint.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("checkpoint_at_" + commit)
    exec(compile(source, f"{commit}:pipeline/run/checkpoint.py", "exec"), module.__dict__)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--containers", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=10, help="frames of each open traceback (two lines each)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each step; the best is reported")
    ap.add_argument("--pickle-from", metavar="COMMIT", help="also time that commit's pickled checkpoints")
    args = ap.parse_args()

    attempt_of = AttemptOf(EventBook())
    part = partition.LogPartition(attempt_of, progress=DerivedProgress())
    items = envelopes(args.containers, args.frames)
    part.feed_batch(items, [], None)
    state = part.snapshot()
    traces = sum(1 for c in state.curator.containers for s in c.subs for p in s.parsers if type(p).__name__ == "TraceState")
    print(f"{len(part.curator.curators):,} containers, {traces:,} open traces, {len(items):,} lines fed")

    t_dump, data = best_of(args.repeat, lambda: checkpoint.dumps(part))
    t_load, _ = best_of(args.repeat, lambda: checkpoint.loads(data, attempt_of, progress=DerivedProgress()))
    raw = snapshot._encoder.encode(snapshot.Snapshot(snapshot.SCHEMA, "bench", part.snapshot()))
    print(f"snapshot:  {len(data) / 1e3:8.1f} kB stored ({len(raw) / 1e3:,.1f} kB MessagePack before zlib), "
          f"save {t_dump * 1e3:6.1f} ms, load+restore {t_load * 1e3:6.1f} ms")

    if args.pickle_from:
        old = pickled_checkpoints(args.pickle_from)
        shared = {**old.module_constants(), "attempt_of": attempt_of}
        t_dump, data = best_of(args.repeat, lambda: old.dumps(part, shared))
        t_load, _ = best_of(args.repeat, lambda: old.loads(data, shared))
        print(f"pickle ({args.pickle_from}): {len(data) / 1e3:8.1f} kB stored, save {t_dump * 1e3:6.1f} ms, "
              f"load {t_load * 1e3:6.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
