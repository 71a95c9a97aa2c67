"""The ceiling of a bulk step-line path (issue 19, option (a)): what the replay gains if reading a step line were free.

A bulk path (one compiled pattern's `finditer` over a block's step lines, records built from the match
groups) would replace, per step line, the rank-prefix strip and the layout read of
`step_lines.feed_step_line` (`strip_rank_prefixes`, `StepParser.read_whole`) with work in C. What it must
still do per record is what comes after: the line's seq, `StepParser.feed_read` (the record from the
fields), `ContainerCurator._emit` (Trainer folder, redaction, stamp) and everything downstream. This
measures that ceiling with an oracle: a warm-up replay notes, for every step line `feed_step_line`
takes, what the strip and the layout read gave; the timed replays answer those two from the table (a
dict lookup) and do the rest as `feed_step_line` does. The output must stay the same (its digest is
printed: the oracle changes nothing but the cost), so the ratio is an upper bound of what any bulk
parse of step lines can win. `drop` is a looser bound: the oracle's step lines make nothing at all
(no record, nothing downstream; its output differs).

    python -m bench.step_ceiling                                   # realistic-300000, CPU, 3 rounds in turns
    python -m bench.step_ceiling --variants base,oracle --rounds 5
    valgrind --tool=callgrind --toggle-collect=functools_reduce python -m bench.step_ceiling --lines 30000 --callgrind oracle

`--callgrind VARIANT` replays once more after the warm-up inside `functools.reduce`, so that callgrind
(`--toggle-collect=functools_reduce`, PYTHONHASHSEED=0) counts that replay's instructions alone.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import cached
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.steps import NOT_WHOLE
from gangscope.pipeline.curate import container, step_lines
from gangscope.pipeline.run import replay
from gangscope.pipeline.sinks.local import LocalFolderSink

ORIGINAL = step_lines.feed_step_line
STEP_INDEX = step_lines.STEP_INDEX
_new_line = tuple.__new__
# (stream, line text) -> (text without rank prefixes, rank, local rank, sub-stream key, read_whole's answer)
ORACLE: dict = {}


def recording(c, t, stream, text, exact_from, out):
    """`feed_step_line`, noting what the strip and the layout read gave where it took the line."""
    body, rank, local_rank = strip_rank_prefixes(text)
    key = (stream, rank, local_rank) if (rank is not None or local_rank is not None) else stream
    sub = c.subs.get(key)
    found = None if sub is None else sub.parsers[STEP_INDEX].read_whole(body)
    taken = ORIGINAL(c, t, stream, text, exact_from, out)
    if taken and found is not NOT_WHOLE:
        ORACLE[(stream, text)] = (body, rank, local_rank, key, found)
    return taken


def oracle(c, t, stream, text, exact_from, out):
    """`feed_step_line` with the strip and the layout read answered from the table."""
    entry = ORACLE.get((stream, text))
    if entry is None:
        return ORIGINAL(c, t, stream, text, exact_from, out)
    body, rank, local_rank, key, found = entry
    sub = c.subs.get(key)
    if sub is None or sub.open_bits:
        return ORIGINAL(c, t, stream, text, exact_from, out)
    parser = sub.parsers[STEP_INDEX]
    if parser._block is not None or parser._bar_lines:
        return ORIGINAL(c, t, stream, text, exact_from, out)
    if c.trainer_logs.bar_due is not None:
        c._bar_wait_ends(out)
    seq = c.next_seq(stream, t)
    sub.last_time = t
    records = parser.feed_read(found, _new_line(Line, (t, seq, body, rank, local_rank)))
    if records:
        c._emit(records, stream, out)
    return True


def drop(c, t, stream, text, exact_from, out):
    """The oracle's step lines make nothing (a looser bound: their records and all downstream go)."""
    return (stream, text) in ORACLE or ORIGINAL(c, t, stream, text, exact_from, out)


VARIANTS = {"base": ORIGINAL, "oracle": oracle, "drop": drop}


def replay_once(corpus: Path, feed) -> tuple[float, str]:
    """CPU seconds of one in-process replay + local sink (as bench.ab_replay's child), and a digest of its files."""
    container.feed_step_line = feed
    out = Path(tempfile.mkdtemp())
    try:
        start = time.process_time()
        sink = LocalFolderSink(out)
        result = replay.run(replay.ReplayOptions(paths=[str(corpus)]), sink.write)
        sink.close(result.summary())
        took = time.process_time() - start
        digest = hashlib.sha256()
        for f in sorted(out.rglob("*")):
            if f.is_file() and f.name != "summary.json":  # (the summary holds times)
                digest.update(f.relative_to(out).as_posix().encode())
                digest.update(f.read_bytes())
        return took, digest.hexdigest()[:12]
    finally:
        container.feed_step_line = ORIGINAL
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mix", default="realistic")
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="base,oracle,drop")
    ap.add_argument("--callgrind", metavar="VARIANT", choices=sorted(VARIANTS))
    args = ap.parse_args()
    corpus = cached(args.mix, args.lines)
    replay_once(corpus, recording)  # warm-up: fills the table (and the caches every variant then finds warm)
    print(f"{len(ORACLE):,} step lines in the table", flush=True)
    if args.callgrind:
        took, digest = functools.reduce(lambda _x, _y: replay_once(corpus, VARIANTS[args.callgrind]), (0,), None)
        print(f"{args.callgrind}: output {digest}")
        return
    names = args.variants.split(",")
    best: dict[str, float] = {}
    digests: dict[str, str] = {}
    for n in range(args.rounds):
        for name in names:
            took, digests[name] = replay_once(corpus, VARIANTS[name])
            best[name] = min(best.get(name, took), took)
            print(f"round {n}: {name} {took:.3f} s", flush=True)
    for name in names:
        ratio = f", {best['base'] / best[name]:.3f}x of base" if "base" in best else ""
        print(f"{name}: best {best[name]:.3f} s CPU{ratio}, output {digests[name]}")
    if "base" in digests and "oracle" in digests and digests["oracle"] != digests["base"]:
        sys.exit("the oracle changed the output: its ceiling does not hold")


if __name__ == "__main__":
    main()
