"""What each class of line costs a replay, and the floor ratio if that class cost nothing (issue 19).

The realistic corpus (bench/corpus.py) is replayed once to find its lines by the records they make
(a line is its pod and its CRI time: every line of a pod has a time of its own); then copies of the
corpus without one class of lines each are replayed, with the floor (bench/replay_bench.floor), in
turns, in CPU time, the best of `--rounds` each (bench/ab_replay.measure: a fresh process, imports
excluded). A class's cost is the full replay's time less the copy's; its lines' records, and all
their downstream work (stamp, digest, back half, sink), go with them.

    python -m bench.line_classes                       # realistic, 300k lines, 3 rounds
    python -m bench.line_classes --lines 30000 --rounds 2

Classes: `steps` (the lines of step records), `warning` (the lines of the error records of the
warning every rank repeats, pattern store_connect), `both`. Prints, per copy: lines left, best CPU
seconds, the class's seconds and microseconds per line of it, and the ratio `bench.honest` would
read if the class cost nothing (the floor over the copy's time: the floor still counts every line).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.ab_replay import measure
from bench.corpus import cached
from bench.replay_bench import floor

WARNING_PATTERN = "store_connect"  # the c10d socket warning every rank of the realistic corpus prints


def line_keys(out: Path) -> dict[str, set[tuple[str, str]]]:
    """(pod, time) of the lines behind each class, from a replay's --out folder."""
    steps, warning = set(), set()
    with open(out / "step.ndjson", "rb") as fh:
        for line in fh:
            r = json.loads(line)
            steps.add((r["pod"], r["time"]))
    with open(out / "error.ndjson", "rb") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("pattern") == WARNING_PATTERN:
                warning.add((r["pod"], r["time"]))
    return {"steps": steps, "warning": warning, "both": steps | warning}


def without(corpus: Path, dest: Path, drop: set[tuple[str, str]]) -> tuple[int, int]:
    """A copy of `corpus` at `dest` without the lines `drop` names: (lines read, lines dropped)."""
    read = dropped = 0
    for path in sorted(corpus.rglob("*.log")):
        pod = path.parent.parent.name.split("_")[1]  # pods/<namespace>_<pod>_<uid>/<container>/N.log
        target = dest / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "rb") as fi, open(target, "wb") as fo:
            for line in fi:
                read += 1
                if (pod, line.split(b" ", 1)[0].decode()) in drop:
                    dropped += 1
                    continue
                fo.write(line)
    return read, dropped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from gangscope.pipeline.run import replay
    from gangscope.pipeline.sinks.local import LocalFolderSink

    corpus = cached("realistic", args.lines)
    work = Path(tempfile.mkdtemp(prefix="gangscope-classes-"))
    try:
        sink = LocalFolderSink(work / "out")
        result = replay.run(replay.ReplayOptions(paths=[str(corpus)]), sink.write)
        sink.close(result.summary())
        copies = {"full": (corpus, 0)}
        for name, drop in line_keys(work / "out").items():
            read, dropped = without(corpus, work / name, drop)
            copies[name] = (work / name, dropped)
        print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            start = time.process_time()
            lines, _wall = floor(corpus)
            best["floor"] = min(best.get("floor", float("inf")), time.process_time() - start)
            for name, (path, _n) in copies.items():
                seconds, _replayed = measure(path, 1, None)
                best[name] = min(best.get(name, float("inf")), seconds)
        print(f"load average {os.getloadavg()[0]:.1f} at the end; floor {best['floor']:.3f} s CPU for {lines:,} lines", flush=True)
        full = best["full"]
        for name, (_path, dropped) in copies.items():
            cost = full - best[name]
            per_line = f"{cost / dropped * 1e6:5.1f} us a line of it" if dropped else ""
            print(f"{name:8s} {lines - dropped:>8,} lines {best[name]:6.3f} s; the class {cost:6.3f} s ({cost / full:5.1%}) "
                  f"{dropped:>7,} lines {per_line}; ratio {best['floor'] / best[name]:.3f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
