"""Before and after: `replay` of one corpus by an earlier commit and by this checkout, in turns.

A noisy machine moves every figure; two codes measured in the same minute, in CPU time
of the replay alone (imports and start-up excluded), give a ratio that holds.
The earlier commit is checked out with `git worktree` into a temporary folder and
imported from there (the package layout is rebuilt with links); both write to the
local sink.

    python -m bench.ab_replay --base 3b57e19                     # default mix, 1M lines
    python -m bench.ab_replay --base 3b57e19 --mix steps --rounds 3
    python -m bench.ab_replay --base 882b787 --this HEAD --mix realistic --lines 300000

`--this COMMIT` measures that commit (checked out the same way) instead of the working tree:
where others edit the same checkout, two commits compare what was committed, nothing else.

Prints each side's best CPU time and lines/s, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.corpus import cached

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Run in a child: best CPU time of `replay.run` over the corpus, and its line count.
_CHILD = """
import sys, time, tempfile, shutil
from pathlib import Path
try:
    from gangscope.pipeline.run import replay
except ImportError:  # a commit from before the rooms (issue 15): pipeline/replay.py
    from gangscope.pipeline import replay
from gangscope.pipeline.sinks.local import LocalFolderSink
best = None
for _ in range(int(sys.argv[2])):
    out = Path(tempfile.mkdtemp())
    start = time.process_time()
    sink = LocalFolderSink(out)
    result = replay.run(replay.ReplayOptions(paths=[sys.argv[1]]), sink.write)
    sink.close(result.summary())
    took = time.process_time() - start
    shutil.rmtree(out)
    best = took if best is None else min(best, took)
print(best, result.curation.lines)
"""


def measure(corpus: Path, repeat: int, pythonpath: str | None) -> tuple[float, int]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-c", _CHILD, str(corpus), str(repeat)], env=env, capture_output=True,
                          text=True, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"replay failed: {done.stderr.strip()[-400:]}")
    seconds, lines = done.stdout.split()
    return float(seconds), int(lines)


def base_package(commit: str, work: Path, name: str = "tree") -> Path:
    """`commit` checked out, with a `gangscope` package of links to its folders; returns the PYTHONPATH."""
    tree = work / name
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), commit], check=True, capture_output=True)
    package = work / f"path-{name}" / "gangscope"
    package.mkdir(parents=True)
    for folder in ("parsers", "pipeline", "templates"):
        (package / folder).symlink_to(tree / folder)
    shutil.copy(tree / "gangscope" / "__init__.py", package / "__init__.py")
    return work / f"path-{name}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--mix", default="default")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--this", help="a later commit to measure instead of the working tree")
    ap.add_argument("--rounds", type=int, default=2, help="base/this pairs, in turns")
    ap.add_argument("--repeat", type=int, default=1, help="replays per measurement (the best counts)")
    args = ap.parse_args()
    corpus = cached(args.mix, args.lines)
    work = Path(tempfile.mkdtemp(prefix="gangscope-ab-"))
    try:
        path = base_package(args.base, work)
        this_path = str(base_package(args.this, work, "this")) if args.this else None
        base = this = None
        for _ in range(args.rounds):
            b, lines = measure(corpus, args.repeat, str(path))
            t, _ = measure(corpus, args.repeat, this_path)
            base = b if base is None else min(base, b)
            this = t if this is None else min(this, t)
        print(f"corpus {corpus.name}: {lines:,} lines")
        print(f"base {args.base:<12} {base:7.3f} s CPU  {lines / base:>10,.0f} lines/s")
        label = args.this or "this checkout"
        print(f"{label:<14} {this:7.3f} s CPU  {lines / this:>10,.0f} lines/s  ({base / this:.2f}x)")
    finally:
        for name in ("tree", "this"):
            if (work / name).exists():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / name)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
