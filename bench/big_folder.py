"""Peak memory of `gangscope replay` over a very large folder: does RSS stay flat as input grows?

The folder is the 1M-line benchmark corpus (bench/corpus.py) repeated under new pod
names until it reaches the asked size. The copies are hard links, so a 10 GB folder
costs no disk; every pod is still a pod of its own to the replay (its own uid, job
and records), and the replay reads every byte of it.

    python -m bench.big_folder --gb 10 --workers 2
    python -m bench.big_folder --gb 1 2 5          # RSS against input size

Prints, per size: lines, GB, seconds, lines/s, and the peak RSS of the largest
gangscope process (the parent, or the largest worker).
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
from pathlib import Path

from bench.corpus import cached

HERE = Path(__file__).resolve().parent
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(0 if code in (0, 1) else code)\n"
)


def build(seed: Path, out: Path, gb: float) -> tuple[int, int]:
    """Hard-link copies of `seed`'s pods into `out` until it holds `gb` GB; (bytes, copies)."""
    pods = sorted((seed / "pods").iterdir())
    one = sum(f.stat().st_size for f in (seed / "pods").rglob("*.log"))
    copies = max(1, round(gb * 1e9 / one))
    for c in range(copies):
        for pod in pods:
            ns, name, uid = pod.name.split("_", 2)
            target = out / "pods" / f"{ns}_{name}-c{c:04d}_{uid[:-5]}{c:05d}"
            for path in pod.rglob("*.log"):
                dest = target / path.relative_to(pod)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.link(path, dest)
    return one * copies, copies


def replay(folder: Path, workers: int) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB of the largest process, lines) of one replay to a temporary folder."""
    out = Path(tempfile.mkdtemp(prefix="gangscope-big-"))
    try:
        command = [sys.executable, "-m", "gangscope", "replay", str(folder), "--out", str(out / "out"),
                   "--workers", str(workers), "--no-progress"]
        start = time.perf_counter()
        # A fresh parent per run: its RUSAGE_CHILDREN peak is this replay's largest process
        # (the replay itself or any worker it waited for), not an earlier run's.
        done = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"replay failed: {done.stderr.strip()[-400:]}")
        peak_mb = int(done.stdout.split()[-1]) / 1024
        summary = json.loads((out / "out" / "summary.json").read_text())
        return seconds, peak_mb, summary["lines"]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, nargs="+", default=[10.0])
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    seed = cached("default", 1_000_000)
    for gb in args.gb:
        work = Path(tempfile.mkdtemp(prefix="gangscope-bigfolder-", dir=HERE / ".corpus"))
        try:
            size, copies = build(seed, work, gb)
            seconds, peak_mb, lines = replay(work, args.workers)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"{size / 1e9:6.1f} GB  {lines:>12,} lines  {copies * 16:>6,} pods  {seconds:7.1f} s  "
              f"{lines / seconds:>10,.0f} lines/s  workers {args.workers}  peak RSS {peak_mb:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
