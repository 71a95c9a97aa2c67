"""Score the diagnosis on every labeled fixture, against two baselines.

    python -m bench.score_diagnosis            # fixtures/runs and fixtures/public
    python -m bench.score_diagnosis DIR...     # other case folders (each with manifest.json)

A case is a folder with `manifest.json` (its `label`: outcome, category,
first_failure {pod, rank}; `any_rank_ok` when every rank is a right answer) and the
pod logs under it (`pods/<ns>_<pod>_<uid>/<container>/0.log`, or any file the
pipeline reads). Each case is curated by the real pipeline (`replay.run`), then:

- gangscope: `pipeline.diagnose` (the attempt with a failure, else the first);
- last traceback: the category of the last trace printed in the job's logs and its rank
  (what one reads at the bottom of the log);
- torchrun box: the "Root Cause (first observed failure)" entry of the first
  ChildFailedError box printed (its exit signal or its exception; its rank).

Prints a table per case and the accuracy of category and first-failing rank per method.
Exit code 1 when gangscope is below 100% on either.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from gangscope.parsers.errors import child_failures, classify_trace, failure_category, root_failure
from gangscope.parsers.records import TraceRecord
from gangscope.pipeline.run import replay

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SETS = (ROOT / "fixtures" / "runs", ROOT / "fixtures" / "public")
METHODS = ("gangscope", "last traceback", "torchrun box")


@dataclass
class Guess:
    category: str | None
    rank: int | None


@dataclass
class Case:
    name: str
    path: Path
    label: dict
    events: list[str]


def find_cases(folders: list[Path]) -> list[Case]:
    cases = []
    for folder in folders:
        candidates = [folder] if (folder / "manifest.json").is_file() else sorted(p for p in folder.iterdir() if p.is_dir())
        for path in candidates:
            manifest = path / "manifest.json"
            if not manifest.is_file():
                continue
            data = json.loads(manifest.read_text())
            label = data.get("label")
            if not isinstance(label, dict) or "category" not in label:
                continue
            events = [str(path / e) for e in data.get("events_files", [])] if isinstance(data.get("events_files"), list) else []
            if not events and (path / "events").is_dir():
                events = [str(path / "events")]
            label = dict(label, any_rank_ok=data.get("label", {}).get("any_rank_ok") or data.get("any_rank_ok", False))
            cases.append(Case(f"{folder.name}/{path.name}", path, label, events))
    return cases


def run_case(case: Case) -> dict[str, Guess]:
    logs = case.path / "pods" if (case.path / "pods").is_dir() else case.path / "logs"
    result = replay.run(replay.ReplayOptions(paths=[str(logs)], events=case.events), lambda batch: None)
    diagnoses = result.diagnoses
    chosen = next((d for d in diagnoses if d.category not in ("success",)), diagnoses[0] if diagnoses else None)
    ours = Guess(chosen.category, (chosen.first_failure or {}).get("rank")) if chosen else Guess(None, None)
    traces = sorted((r for r in result.digest.all_records() if isinstance(r, TraceRecord)), key=lambda t: (t.time or "", t.seq))
    return {"gangscope": ours, "last traceback": last_traceback(traces), "torchrun box": torchrun_box(traces)}


def last_traceback(traces: list[TraceRecord], empty: str = "success") -> Guess:
    """The category of the last trace printed and its rank (`empty` when none was): what one reads
    at the bottom of the log."""
    if not traces:
        return Guess(empty, None)
    last = traces[-1]
    verdict = classify_trace(last)
    rank = last.rank
    if rank is None and child_failures(last):
        rank = (root_failure(last) or {}).get("rank")
    return Guess(verdict[0] if verdict else "unknown", rank)


def torchrun_box(traces: list[TraceRecord]) -> Guess:
    for trace in traces:
        if trace.form == "child_failed" or (trace.exception_type or "").endswith("ChildFailedError"):
            root = root_failure(trace)
            if root is None:
                continue
            return Guess(failure_category(root)[0], root.get("rank"))
    return Guess("success" if not traces else "unknown", None)


def right(case: Case, guess: Guess) -> tuple[bool, bool]:
    label = case.label
    category_ok = guess.category == label.get("category")
    want = (label.get("first_failure") or {}).get("rank")
    if case.label.get("any_rank_ok"):
        rank_ok = guess.rank is not None
    else:
        rank_ok = guess.rank == want
    return category_ok, rank_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true", help="print the per-case results as JSON")
    args = parser.parse_args(argv)
    folders = args.folders or [p for p in DEFAULT_SETS if p.is_dir()]
    cases = find_cases(folders)
    if not cases:
        print("score_diagnosis: no labeled case found in " + ", ".join(map(str, folders)), file=sys.stderr)
        return 2
    score = {m: [0, 0] for m in METHODS}
    rows = []
    for case in cases:
        guesses = run_case(case)
        row = {"case": case.name, "label": [case.label.get("category"), (case.label.get("first_failure") or {}).get("rank")]}
        for method, guess in guesses.items():
            cat_ok, rank_ok = right(case, guess)
            score[method][0] += cat_ok
            score[method][1] += rank_ok
            row[method] = [guess.category, guess.rank, cat_ok, rank_ok]
        rows.append(row)
    if args.json:
        print(json.dumps({"cases": rows, "score": score}, indent=2))
    else:
        width = max(len(r["case"]) for r in rows)
        print(f"{'case':{width}}  {'label':24}  " + "  ".join(f"{m:30}" for m in METHODS))
        for r in rows:
            label = f"{r['label'][0]}/{r['label'][1]}"
            cells = []
            for m in METHODS:
                cat, rank, cat_ok, rank_ok = r[m]
                cells.append(f"{('' if cat_ok else '✗')}{cat}/{('' if rank_ok else '✗')}{rank}"[:30].ljust(30))
            print(f"{r['case']:{width}}  {label:24}  " + "  ".join(cells))
        n = len(rows)
        print()
        print(f"{n} labeled cases")
        for m in METHODS:
            cat, rank = score[m]
            print(f"{m:16} category {cat}/{n} = {cat / n:6.1%}   first-failing rank {rank}/{n} = {rank / n:6.1%}")
    ours = score["gangscope"]
    return 0 if ours[0] == len(rows) and ours[1] == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
