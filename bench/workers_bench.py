"""`gangscope replay --workers N` against N, on a given number of cores, with the output checked.

Each run is the real CLI in a fresh process (pinned to the first C cores with
`taskset` when asked), over a folder of many pods; the records of every run must be
those of the one-process run (same ids, same documents: the NDJSON files compared
line for line after sorting, since worker parts are absorbed in pod order).

    python -m bench.workers_bench                       # default corpus, workers 1 2, all cores
    python -m bench.workers_bench --cores 1 2 --workers 1 2 --repeat 3

Prints wall seconds (best of --repeat), lines/s and the speed-up over one worker on
the same cores.
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


def run(corpus: Path, out: Path, workers: int, cores: int | None) -> float:
    command = [sys.executable, "-m", "gangscope", "replay", str(corpus), "--out", str(out), "--workers", str(workers), "--no-progress"]
    if cores is not None:
        command = ["taskset", "-c", ",".join(str(c) for c in range(cores)), *command]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"replay failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return seconds


def records_of(out: Path) -> dict[str, list[bytes]]:
    return {p.name: sorted(p.read_bytes().splitlines()) for p in sorted(out.glob("*.ndjson"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mix", default="default")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--pods", type=int, default=64, help="pods in the corpus (the unit of work)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cores", type=int, nargs="+", default=[None], help="pin to the first C cores (taskset)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    corpus = cached(args.mix, args.lines, pods=args.pods)
    size = sum(p.stat().st_size for p in corpus.rglob("*.log"))
    print(f"corpus {corpus.name}: {size / 1e6:.1f} MB, {os.cpu_count()} cores on this machine")
    work = Path(tempfile.mkdtemp(prefix="gangscope-workers-"))
    try:
        reference = None
        for cores in args.cores:
            base = None
            for workers in args.workers:
                out = work / f"c{cores}-w{workers}"
                best = min(run(corpus, out if i == 0 else work / "again", workers, cores) for i in range(args.repeat))
                lines = json.loads((out / "summary.json").read_text())["lines"]
                got = records_of(out)
                if reference is None:
                    reference = got
                same = "same records" if got == reference else "RECORDS DIFFER"
                base = base or best
                print(f"cores {cores or os.cpu_count()}  workers {workers}  {best:6.2f} s  {lines / best:>10,.0f} lines/s  "
                      f"{size / 1e6 / best:6.1f} MB/s  speed-up {base / best:4.2f}x  {same}", flush=True)
                if got != reference:
                    raise SystemExit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
