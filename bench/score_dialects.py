"""Recall and spurious records of the step parser on progress lines of many frameworks.

    python -m bench.score_dialects              # both halves, per framework
    python -m bench.score_dialects --split held --failures

The corpus is fixtures/generate/dialect_corpus.py: per framework, lines built from the format
strings of its source (cited per variant) with our own values, and the eval / validation /
test / summary lines of that framework, which must give no step record. A training line is
read right when a record of its step carries every expected field (step, loss, learning rate,
grad norm, throughput within 1e-6 relative; a field printed as NaN/Inf must be null and named
in `nonfinite`). A record that matches no expected line is spurious.

Lines go through what the pipeline runs: launcher prefixes stripped (parsers/lines.py), the
step parser's prefilter unless the parser is open, `StepParser.feed`, then `close`, and the
records through `TrainerLogFolder` as the container's curation passes them (it numbers the
Trainer's dicts and consumes the plan lines).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.steps import StepParser, TrainerLogFolder

_CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "generate" / "dialect_corpus.py"


def corpus():
    spec = importlib.util.spec_from_file_location("dialect_corpus", _CORPUS)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["dialect_corpus"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def run_stream(lines: list[str]) -> list:
    parser = StepParser()
    folder = TrainerLogFolder()
    prefilter = re.compile(StepParser.PREFILTER).search
    out = []
    for i, raw in enumerate(lines):
        text, rank, local_rank = strip_rank_prefixes(raw)
        if parser.open or prefilter(text):
            out += folder.add(parser.feed(Line(f"2024-05-01T12:00:00.{i:06d}Z", 0, text, rank, local_rank))[1])
    return out + folder.add(parser.close()) + folder.close()


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(b, float) and not math.isfinite(b):
        return False
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


def wrong_fields(exp, rec) -> list[str]:
    bad = []
    if exp.step is not None and rec.step != exp.step:
        bad.append(f"step {rec.step}!={exp.step}")
    for f in ("loss", "learning_rate", "grad_norm", "throughput"):
        want = getattr(exp, f)
        got = getattr(rec, f, None)
        if f in exp.nonfinite:
            if got is not None or f not in (getattr(rec, "nonfinite", None) or ()):
                bad.append(f"{f} {got!r} not null+nonfinite")
        elif want is not None and not _close(want, got):
            bad.append(f"{f} {got!r}!={want!r}")
    return bad


def score(stream, recs) -> tuple[int, int, list[str]]:
    """(lines read right, spurious records, what went wrong)."""
    steps = [r for r in recs if type(r).__name__ == "StepRecord"]
    used: set[int] = set()
    right, notes = 0, []
    for exp in stream.expect:
        cands = [i for i, r in enumerate(steps) if i not in used and (exp.step is None or r.step == exp.step)]
        if not cands:
            notes.append(f"missed step {exp.step}")
            continue
        best = min(cands, key=lambda i: len(wrong_fields(exp, steps[i])))
        used.add(best)
        bad = wrong_fields(exp, steps[best])
        if bad:
            notes.append(f"step {exp.step}: " + ", ".join(bad))
        else:
            right += 1
    spurious = [r for i, r in enumerate(steps) if i not in used]
    for r in spurious:
        notes.append(f"spurious step={r.step} loss={r.loss} dialect={r.dialect}")
    return right, len(spurious), notes


def table(split: str, failures: bool) -> dict[str, tuple[int, int, int]]:
    mod = corpus()
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for variant, stream in mod.samples(split):
        recs = run_stream(stream.lines)
        right, spurious, notes = score(stream, recs)
        row = per[variant.framework]
        row[0] += right
        row[1] += len(stream.expect)
        row[2] += spurious
        if failures and notes:
            print(f"  [{split}] {variant.framework} / {variant.name}: " + "; ".join(notes[:4]))
    return {k: tuple(v) for k, v in per.items()}  # type: ignore[misc]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("build", "held", "both"), default="both")
    ap.add_argument("--failures", action="store_true", help="print what went wrong per variant")
    args = ap.parse_args()
    splits = ("build", "held") if args.split == "both" else (args.split,)
    results = {s: table(s, args.failures) for s in splits}
    names = sorted(set().union(*[r.keys() for r in results.values()]))
    print(f"{'framework':<20}" + "".join(f"{s + ' right/lines':>20}{'spurious':>10}" for s in splits))
    totals = {s: [0, 0, 0] for s in splits}
    full = {s: 0 for s in splits}
    for n in names:
        row = f"{n:<20}"
        for s in splits:
            r = results[s].get(n)
            if r is None:
                row += f"{'-':>20}{'-':>10}"
                continue
            row += f"{f'{r[0]}/{r[1]}':>20}{r[2]:>10}"
            for i in range(3):
                totals[s][i] += r[i]
            full[s] += r[0] == r[1] and r[2] == 0
        print(row)
    for s in splits:
        t = totals[s]
        pct = 100.0 * t[0] / t[1] if t[1] else 0.0
        print(f"{s}: {t[0]}/{t[1]} lines read right ({pct:.1f} %), {t[2]} spurious records, "
              f"{full[s]}/{len(results[s])} frameworks fully right")


if __name__ == "__main__":
    main()
