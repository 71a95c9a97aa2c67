"""A sampling profile of `replay` on a benchmark corpus, kept under bench/profiles/.

py-spy samples the replay of one corpus (one process, local-folder sink) from outside
the process, so the profile costs the replay nothing; the raw stacks are folded into
two tables per function: self time (where the CPU is) and inclusive time (what a
call costs with everything under it).

    python -m bench.profile_replay                     # default mix, 1M lines
    python -m bench.profile_replay --mix steps --lines 200000
    python -m bench.profile_replay --mix realistic --lines 300000 --under Replay.run --by-line

`--under Replay.run` counts only the samples taken inside that call: the replay as
bench.ab_replay and bench.honest time it, without the imports, the report and the start-up
(~25 % of the whole process's samples on realistic-300000, mostly compiling imported
modules' bytecode on a first run). `--by-line` adds a table of self time by source line.

Writes bench/profiles/<mix>-<lines>.txt (the tables) and prints the top entries.
Needs py-spy (`pip install -e '.[bench]'`) and permission to ptrace (root, or
kernel.yama.ptrace_scope=0).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.corpus import cached

HERE = Path(__file__).resolve().parent
_LINE_NO = re.compile(r":\d+\)$")


def fold(raw: Path, under: str | None = None, by_line: bool = False) -> tuple[int, Counter, Counter]:
    """py-spy's raw output (one `frame;frame;... count` per line) -> (samples, self, inclusive).

    `under`: a function as py-spy names it (`Replay.run`): only the stacks that pass through it
    count. `by_line`: self time keyed by the frame with its line (`name (file:line)`)."""
    self_time: Counter = Counter()
    inclusive: Counter = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        raw_frames = stack.split(";")
        if under is not None and not any(f.split(" (", 1)[0] == under for f in raw_frames):
            continue
        n = int(count)
        total += n
        frames = [_LINE_NO.sub(")", f) for f in raw_frames]
        self_time[raw_frames[-1] if by_line else frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    return total, self_time, inclusive


def table(title: str, counts: Counter, total: int, top: int) -> list[str]:
    lines = [title, "-" * len(title)]
    for frame, n in counts.most_common(top):
        lines.append(f"{100 * n / total:6.1f}%  {frame}")
    return lines + [""]


def checkout() -> str:
    """The commit profiled, and whether the working tree had changes beside it (they were profiled too)."""
    root = HERE.parent
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "parsers", "pipeline"],
                           capture_output=True, text=True).stdout.strip()
    return f"{commit or 'unknown commit'}" + (" with uncommitted changes to parsers/ or pipeline/" if dirty else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mix", default="default")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--rate", type=int, default=250, help="samples per second")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--out", type=Path, help="where to write the tables (default bench/profiles/<mix>-<lines>.txt)")
    ap.add_argument("--under", metavar="FUNCTION",
                    help="count only the samples inside this function, as py-spy names it (e.g. Replay.run)")
    ap.add_argument("--by-line", action="store_true", help="a table of self time by source line too")
    args = ap.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: pip install -e '.[bench]'")
    corpus = cached(args.mix, args.lines)
    work = Path(tempfile.mkdtemp(prefix="gangscope-profile-"))
    try:
        raw = work / "stacks.txt"
        command = [sys.executable, "-m", "gangscope", "replay", str(corpus), "--out", str(work / "out"), "--no-progress"]
        done = subprocess.run([spy, "record", "--format", "raw", "--rate", str(args.rate), "--output", str(raw), "--", *command],
                              capture_output=True, text=True)
        if not raw.exists():
            raise SystemExit(f"py-spy failed: {done.stderr.strip()[-500:]}")
        total, self_time, inclusive = fold(raw, args.under)
        by_line = fold(raw, args.under, by_line=True)[1] if args.by_line else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not total:
        raise SystemExit(f"no sample{' inside ' + args.under if args.under else ''}: nothing written"
                         + (" (a function as py-spy names it, e.g. Replay.run)" if args.under else ""))
    header = [f"replay of {corpus.name} ({args.lines:,} lines, mix {args.mix}), {total} samples at {args.rate}/s (py-spy)"
              + (f", only those inside {args.under}" if args.under else ""),
              f"code: {checkout()}", ""]
    tables = table("self time", self_time, total, args.top) + table("inclusive time", inclusive, total, args.top)
    if by_line is not None:
        tables += table("self time by line", by_line, total, args.top)
    text = "\n".join(header + tables)
    out = args.out or HERE / "profiles" / f"{args.mix}-{args.lines}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
