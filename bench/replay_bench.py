"""Replay throughput to the local sink on one core, against a floor measured in the same run.

The floor is the fastest useful loop Python runs over the same corpus: split each CRI
line into its four fields and run one compiled regex over the message.

    python -m bench.replay_bench                 # makes bench/.corpus/default (1M lines) if missing
    python -m bench.replay_bench --mix crash --lines 200000

Then the reference path (every line decoded and read as text, no block scan) replays the
same corpus and the two outputs must hold the same records (`--no-check` skips it).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import tempfile
import time
from pathlib import Path

from bench.corpus import cached
from gangscope.pipeline.curate import container
from gangscope.pipeline.run import replay
from gangscope.pipeline.sinks.local import LocalFolderSink


def floor(root: Path) -> tuple[int, float]:
    pattern = re.compile(r"Traceback|Error|loss")
    lines = 0
    start = time.perf_counter()
    for path in sorted(root.rglob("*.log")):
        with open(path, "rb") as fh:
            while True:
                block = fh.read(1 << 20)
                if not block:
                    break
                for raw in block.decode("utf-8", "replace").split("\n"):
                    parts = raw.split(" ", 3)
                    if len(parts) == 4:
                        pattern.search(parts[3])
                    lines += 1
    return lines, time.perf_counter() - start


def run_replay(root: Path, out: Path, without: tuple[str, ...] = (), block_scan: bool = True) -> tuple[replay.ReplayResult, float]:
    if without:
        # An A/B of one parser's cost: the same replay with it taken out of the parser table.
        container.LINE_PARSERS = tuple(c for c in container.LINE_PARSERS if c.__name__ not in without)
    sink = LocalFolderSink(out)
    start = time.perf_counter()
    result = replay.run(replay.ReplayOptions(paths=[str(root)], block_scan=block_scan), sink.write)
    sink.close(result.summary())
    return result, time.perf_counter() - start


def same_records(a: Path, b: Path) -> tuple[int, list[str]]:
    """(records compared, kinds whose records differ) between two output folders."""
    compared, differ = 0, []
    for path in sorted(a.glob("*.ndjson")):
        mine = sorted(path.read_bytes().splitlines())
        other_path = b / path.name
        other = sorted(other_path.read_bytes().splitlines()) if other_path.exists() else []
        compared += len(mine)
        if mine != other:
            differ.append(f"{path.stem} ({len(mine)} vs {len(other)} records)")
    return compared, differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mix", default="default")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--corpus", type=Path, help="corpus folder (default bench/.corpus/<mix>-<lines>)")
    ap.add_argument("--without", nargs="+", default=(), metavar="PARSER", help="leave these parser classes out (e.g. StepParser)")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip the check that the reference path (every line read as text) gives the same records")
    args = ap.parse_args()
    corpus = args.corpus or cached(args.mix, args.lines)
    size = sum(p.stat().st_size for p in corpus.rglob("*.log"))
    floor_lines, floor_s = floor(corpus)
    work = Path(tempfile.mkdtemp(prefix="gangscope-bench-"))
    try:
        result, replay_s = run_replay(corpus, work / "fast", tuple(args.without))
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if args.check:
            _ref, ref_s = run_replay(corpus, work / "reference", block_scan=False)
            compared, differ = same_records(work / "fast", work / "reference")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = result.curation.lines
    print(f"corpus      {corpus} ({lines:,} lines, {size / 1e6:.1f} MB, mix {args.mix})")
    if args.without:
        print(f"without     {', '.join(args.without)}")
    print(f"floor       {floor_lines / floor_s:>12,.0f} lines/s  {size / 1e6 / floor_s:8.1f} MB/s")
    print(f"replay      {lines / replay_s:>12,.0f} lines/s  {size / 1e6 / replay_s:8.1f} MB/s  ratio to floor {floor_s / replay_s:.2f}")
    print(f"records     {dict(sorted(result.records.items()))}")
    print(f"peak RSS    {rss_mb:.0f} MB (pid {os.getpid()}, the fast path's run)")
    if args.check:
        verdict = "identical" if not differ else "DIFFERENT: " + ", ".join(differ)
        print(f"reference   {lines / ref_s:>12,.0f} lines/s  every line read as text; records {verdict} ({compared:,} compared)")
        if differ:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
