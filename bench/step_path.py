"""What a step record costs, stage by stage, in instructions (callgrind): issue 19's record path.

The marginal cost of a step line is the difference between two in-process replays (+ summary,
local folder) of a corpus: as it is, and without the lines whose time a step record carries (per
pod; everything those lines cause downstream goes with them: progress, epoch records,
stragglers). Each stage is the inclusive cost of one function, collected by callgrind only while
it runs: the function is called from inside a C entry point of its own (functools.reduce,
itertools' starmap / filterfalse / dropwhile / takewhile / accumulate), one per stage, and
callgrind toggles collection at those entry points. Stages of one group must not nest (an
inner entry point would toggle the outer one's collection off), so the stages run in groups,
each group a run of its own; a wrapped call costs ~0.5-1k instructions more than the call.

    python -m bench.step_path                        # realistic-30000, every group, two runs at a time
    python -m bench.step_path --groups emit --jobs 1

Prints, per stage, the instructions of the whole corpus, of the corpus without its step lines,
and their difference per step line removed. PYTHONHASHSEED=0, the sources compiled first; needs valgrind. One run of
realistic-30000 takes 1-3 minutes of CPU.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.corpus import cached

# The C entry points, in the order the stages of a group take them (starmap's and accumulate's
# calls of the stage are not tail calls, so callgrind sees the stage under them).
ENTRIES = ("functools_reduce", "starmap_next", "filterfalse_next", "dropwhile_next", "takewhile_next", "accumulate_next")

CURATE = "gangscope.pipeline.curate"
RUN = "gangscope.pipeline.run"
# name -> the stages (module:attribute path) of one run; none of a group's stages calls another
GROUPS: dict[str, tuple[str, ...]] = {
    "whole": (),  # no stage: the whole process, imports included
    "halves": (f"{CURATE}.container:ContainerCurator.feed_block", "gangscope.pipeline.sinks.local:LocalFolderSink.close",
               f"{RUN}.replay:GroupWork._with_progress_records", f"{RUN}.replay:Replay.finish"),
    "emit": (f"{CURATE}.container:ContainerCurator._emit", "gangscope.pipeline.correlate.progress:DerivedProgress.derive",
             f"{RUN}.replay:Replay.deliver", "gangscope.pipeline.diagnose.back_half:analyse"),
    "parts": (f"{CURATE}.container:redact_record", f"{CURATE}.identity:Stamper.stamp", "gangscope.parsers.steps:TrainerLogFolder.add",
              "gangscope.parsers.steps:StepParser.feed_read", f"{RUN}.record_counts:RecordCounts.add_records",
              "gangscope.pipeline.diagnose.digest:JobDigest.add"),
    "parse": (f"{CURATE}.step_lines:feed_step_line", f"{CURATE}.substream:SubStream.feed",
              f"{CURATE}.scan:BlockScanner.exact_candidates", f"{CURATE}.container:ContainerCurator._seq_before"),
    "sink": ("gangscope.pipeline.sinks.local:LocalFolderSink.write",),
}


def _via(entry: int, f):
    """`f` called from inside ENTRIES[entry]."""
    if entry == 0:
        return lambda *a, **k: functools.reduce(lambda _x, _y: f(*a, **k), (0,), None)
    if entry == 1:
        return lambda *a, **k: next(itertools.starmap(lambda: f(*a, **k), ((),)))

    def wrapped(*a, **k):
        cell = []

        def call(*_):
            cell.append(f(*a, **k))
            return entry == 3  # dropwhile drops while true: the element is yielded either way

        if entry == 5:
            for _ in itertools.accumulate((0, 0), call):
                pass
        else:
            for _ in (itertools.filterfalse, itertools.dropwhile, itertools.takewhile)[entry - 2](call, (0,)):
                pass
        return cell[0]

    return wrapped


def replay_once(corpus: str, stages: list[str]) -> None:
    """The process callgrind watches: the stages wrapped, then an in-process replay and its summary."""
    for entry, target in enumerate(stages):
        module, _, path = target.partition(":")
        owner = importlib.import_module(module)
        *owners, name = path.split(".")
        for attr in owners:
            owner = getattr(owner, attr)
        setattr(owner, name, _via(entry, getattr(owner, name)))
    from gangscope.pipeline.run import replay
    from gangscope.pipeline.sinks.local import LocalFolderSink

    with tempfile.TemporaryDirectory() as out:
        sink = LocalFolderSink(Path(out) / "out")
        result = replay.run(replay.ReplayOptions(paths=[corpus]), sink.write)
        sink.close(result.summary())


def without_steps(corpus: Path, out: Path) -> int:
    """A copy of the corpus without the lines whose time a step record of their pod carries; how many went."""
    from gangscope.parsers.records import StepRecord
    from gangscope.pipeline.run import replay

    times: dict[str, set] = {}

    def write(batch):
        for r in batch:
            if type(r) is StepRecord:
                times.setdefault(r.pod, set()).add(r.time)

    replay.run(replay.ReplayOptions(paths=[str(corpus)]), write)
    removed = 0
    for f in sorted(corpus.rglob("*.log")):
        pod = f.parent.parent.name.split("_")[1]  # <namespace>_<pod>_<uid>/<container>/<n>.log
        wanted = times.get(pod, set())
        kept = []
        for line in f.read_bytes().split(b"\n"):
            if line.split(b" ", 1)[0].decode("utf-8", "replace") in wanted:
                removed += 1
            else:
                kept.append(line)
        target = out / f.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\n".join(kept))
    return removed


def callgrind(corpus: Path, stages: tuple[str, ...]) -> dict[str, int]:
    """Instructions of each stage (by its entry point), or of the whole process ("whole")."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        toggles = [f"--toggle-collect={e}" for e in ENTRIES[: len(stages)]]
        cmd = ["valgrind", "--tool=callgrind", *toggles, f"--callgrind-out-file={out}", sys.executable,
               "-m", "bench.step_path", "--replay-once", str(corpus), *stages]
        env = dict(os.environ, PYTHONHASHSEED="0")
        run = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"callgrind failed:\n{run.stderr[-2000:]}")
        if not stages:
            return {"whole": int(re.search(r"Collected : (\d+)", run.stderr).group(1))}
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)], capture_output=True, text=True).stdout
    costs = {}
    for stage, entry in zip(stages, ENTRIES):
        m = re.search(r"^\s*([\d,]+) .*:" + entry + r" ", annotated, re.M)
        costs[stage] = int(m.group(1).replace(",", "")) if m else 0
    return costs


def compile_sources() -> None:
    """Every module's bytecode written beforehand (this machine sets PYTHONDONTWRITEBYTECODE): else each
    run compiles the sources again (~1.1G instructions more on realistic-30000's ~4.5G)."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for folder in ("parsers", "pipeline", "gangscope", "bench", "templates"):
        compileall.compile_dir(str(root / folder), quiet=1)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--replay-once":
        replay_once(sys.argv[2], sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mix", default="realistic")
    ap.add_argument("--lines", type=int, default=30_000)
    ap.add_argument("--groups", nargs="*", default=list(GROUPS), choices=list(GROUPS))
    ap.add_argument("--jobs", type=int, default=2, help="callgrind runs at a time")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = cached(args.mix, args.lines)
    compile_sources()
    with tempfile.TemporaryDirectory(prefix="gangscope-nostep-") as tmp:
        bare = Path(tmp) / corpus.name
        removed = without_steps(corpus, bare)
        runs = [(group, which, path) for group in args.groups for which, path in (("full", corpus), ("bare", bare))]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            done = list(pool.map(lambda r: (r[0], r[1], callgrind(r[2], GROUPS[r[0]])), runs))
    table = {}
    for group, which, costs in done:
        for stage, n in costs.items():
            table.setdefault(stage, {"group": group})[which] = n
    for row in table.values():
        row["per_step_line"] = round((row["full"] - row["bare"]) / removed) if removed else None
    if args.json:
        print(json.dumps({"corpus": str(corpus), "step_lines": removed, "stages": table}, indent=2))
        return
    print(f"{corpus.name}: {removed} step lines; instructions with them, without them, and per step line")
    for stage, row in table.items():
        print(f"{row['full']:>15,} {row['bare']:>15,} {row['per_step_line']:>9,}  {stage.split(':')[-1]} ({row['group']})")


if __name__ == "__main__":
    main()
