"""Does cost grow linearly? `gangscope replay` at 1x, 4x and 16x of three shapes of input (issue 17).

- files: N tiny pod logs in kubelet's layout (/var/log/pods/<ns>_<pod>_<uid>/<container>/0.log),
  one job per 8 pods, each log a few steps and, for one pod in 8, a traceback;
- events: N Kubernetes Events in one NDJSON file (the pods of 1,000 jobs: Scheduled, Pulled,
  Started, BackOff ...), replayed with a small log so that the events are linked to a job;
- lines: N lines of one job of 8 pods (steps, noise, a traceback at the end of one rank).

Each run is a child `gangscope replay` (wall seconds; CPU seconds, user + system, which other
work on a shared machine does not inflate; its peak RSS from the kernel, os.wait4: --workers 1).
Linear means: time x4 (+-25 %) and RSS flat (<= 200 MB) for x4 input; x CPU is against the
first scale given.

    python -m bench.scale_bench                                  # 1x and 4x of each, issue sizes
    python -m bench.scale_bench --base 0.05 --scales 1 4 16      # 5k files, 50k events, 500k lines at 1x
    python -m bench.scale_bench --shape lines --scales 1 4 16
    python -m bench.scale_bench --files 5000 --events 50000 --lines 500000   # smaller 1x

Inputs are cached under .cache/scale_bench/ (they take a while to write at 16x).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".cache" / "scale_bench"
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def _ts(seconds: float) -> str:
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((seconds - whole) * 1e9):09d}Z"


TRACE = ["Traceback (most recent call last):", '  File "/w/train.py", line 88, in <module>', "    main()",
         '  File "/w/train.py", line 80, in main', "    loss.backward()",
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]


def make_files(root: Path, n: int) -> Path:
    """N tiny pod logs: 8 pods per job, 5 step lines each, a traceback in rank 3 of each job."""
    for p in range(n):
        job, rank = divmod(p, 8)
        pod = f"job{job}-worker-{rank}"
        d = root / f"team-a_{pod}_{uuid.uuid5(uuid.NAMESPACE_URL, pod)}" / "pytorch"
        d.mkdir(parents=True)
        lines = [f"{_ts(T0 + s)} stdout F step {s} loss {2.0 - s / 10:.2f}" for s in range(1, 6)]
        if rank == 3:
            lines += [f"{_ts(T0 + 6)} stderr F {t}" for t in TRACE]
        (d / "0.log").write_text("\n".join(lines) + "\n")
    return root


def make_events(root: Path, n: int) -> Path:
    """N core/v1 Events in one NDJSON file, about the pods of 1,000 jobs, and a one-line log."""
    root.mkdir(parents=True)
    reasons = ["Scheduled", "Pulling", "Pulled", "Created", "Started", "BackOff", "Killing", "FailedScheduling"]
    with open(root / "events.ndjson", "w") as fh:
        for i in range(n):
            job, rank = divmod(i // len(reasons), 8)
            pod = f"job{job % 1000}-worker-{rank}"
            t = _ts(T0 + i * 0.01)
            fh.write(json.dumps({
                "kind": "Event", "apiVersion": "v1",
                "metadata": {"name": f"{pod}.{i:x}", "namespace": "team-a", "uid": str(uuid.UUID(int=i))},
                "involvedObject": {"kind": "Pod", "name": pod, "namespace": "team-a", "fieldPath": "spec.containers{pytorch}",
                                   "labels": {"job-name": f"job{job % 1000}"}},
                "reason": reasons[i % len(reasons)], "message": f"event {i}", "type": "Normal",
                "source": {"component": "kubelet", "host": f"node-{rank}"}, "count": 1,
                "firstTimestamp": t, "lastTimestamp": t}) + "\n")
    logs = root / "logs" / f"team-a_job0-worker-0_{uuid.uuid5(uuid.NAMESPACE_URL, 'job0-worker-0')}" / "pytorch"
    logs.mkdir(parents=True)
    (logs / "0.log").write_text(f"{_ts(T0 + 1)} stdout F step 1 loss 2.0\n")
    return root


def make_lines(root: Path, n: int) -> Path:
    """N lines of one job of 8 pods: a step line in 4, noise otherwise; rank 3 ends in a traceback."""
    per_pod = n // 8
    for rank in range(8):
        pod = f"big-worker-{rank}"
        d = root / f"team-a_{pod}_{uuid.uuid5(uuid.NAMESPACE_URL, pod)}" / "pytorch"
        d.mkdir(parents=True)
        with open(d / "0.log", "w") as fh:
            chunk = []
            for i in range(per_pod):
                t = _ts(T0 + i * 0.05)
                if i % 4 == 0:
                    chunk.append(f"{t} stdout F step {i // 4 + 1} loss {2.0 / (1 + i / per_pod):.4f} lr 3e-4 grad_norm 1.2\n")
                else:
                    chunk.append(f"{t} stdout F [data] loaded shard {i % 997} in 0.{i % 10}s\n")
                if len(chunk) >= 10_000:
                    fh.write("".join(chunk))
                    chunk = []
            if rank == 3:
                chunk += [f"{_ts(T0 + per_pod * 0.05)} stderr F {line}\n" for line in TRACE]
            fh.write("".join(chunk))
    return root


SHAPES = {"files": make_files, "events": make_events, "lines": make_lines}


def prepared(shape: str, n: int) -> Path:
    root = WORK / f"{shape}-{n}"
    done = root / ".done"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        SHAPES[shape](root, n)
        done.write_text("")
    return root


def replay(shape: str, root: Path, workers: int) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS in MB, exit code) of one `gangscope replay`."""
    out = tempfile.mkdtemp(prefix="scale-out-")
    if shape == "events":
        argv = [str(root / "logs"), "--events", str(root / "events.ndjson")]
    else:
        argv = [str(root)]
    cmd = [sys.executable, "-m", "gangscope", "replay", *argv, "--out", out, "--workers", str(workers)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    shutil.rmtree(out, ignore_errors=True)
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", nargs="*", choices=sorted(SHAPES), default=["files", "events", "lines"])
    ap.add_argument("--scales", nargs="*", type=int, default=[1, 4], help="factors of the 1x sizes (e.g. 1 4 16)")
    ap.add_argument("--base", type=float, default=1.0,
                    help="multiply every 1x size by this first (0.05: 5k files, 50k events, 500k lines)")
    ap.add_argument("--files", type=int, default=100_000, help="pod files at 1x")
    ap.add_argument("--events", type=int, default=1_000_000, help="events at 1x")
    ap.add_argument("--lines", type=int, default=10_000_000, help="lines at 1x")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    base = {"files": args.files, "events": args.events, "lines": args.lines}
    base = {shape: max(8, int(n * args.base)) for shape, n in base.items()}
    print(f"{'shape':<7} {'scale':>5} {'input':>11} {'wall s':>8} {'CPU s':>8} {'x CPU':>7} {'peak RSS MB':>12} {'exit':>5}")
    for shape in args.shape:
        first = None
        for scale in args.scales:
            n = base[shape] * scale
            root = prepared(shape, n)
            took, cpu, rss, code = replay(shape, root, args.workers)
            first = first or cpu
            ratio = cpu / first  # linear: the scale's own factor (CPU time: the machine is shared)
            print(f"{shape:<7} {scale:>4}x {n:>11,} {took:>8.1f} {cpu:>8.1f} {ratio:>6.2f}x {rss:>12.0f} {code:>5}",
                  flush=True)


if __name__ == "__main__":
    main()
