"""Score `gangscope diagnose` on a folder of real failure logs, as a user would run it, against two baselines.

    python -m bench.score_eval ../shared/eval/diagnosis-dev
    python -m bench.score_eval fixtures/eval-heldout --json

A folder holds `NNN.log` files and `labels.json` (a list of {id, category, exception_type,
first_failing_rank, root_line, source, ...}). Each log is diagnosed in its own process, the way a
new user would: `gangscope diagnose FILE --json` (a plain text file is one pod of one job). Per file:

- gangscope: the category and first-failing rank of its answer (the first diagnosis that is
  not `success`/`running` when it gives several); a Python traceback on stderr, a non-JSON
  answer or an empty list are counted as such, and so is a diagnosis that gangscope's own
  isolation caught ("gangscope could not diagnose this attempt").
- keyword table: the first of thirteen keyword rules that matches anywhere in the log, the
  rank of the first line it matched (what a person with grep would do).
- last traceback: the category of the last traceback in the log (gangscope's trace parser and
  `classify_trace`), its rank; `unknown` when the log has none.

Category accuracy is over every file; first-failing-rank accuracy over the files whose label
names a rank. Exit code 0 always (a score, not a gate), 2 when the folder has no labels.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

METHODS = ("gangscope", "keyword table", "last traceback")


@dataclass
class Answer:
    category: str | None
    rank: int | None
    problem: str = ""  # "traceback", "no json", "empty", "isolated" (gangscope only)
    detail: str = ""


@dataclass
class Result:
    id: str
    label: dict
    answers: dict[str, Answer] = field(default_factory=dict)


# The baseline a person with grep would write: first matching line decides (13 rules).
KEYWORDS: tuple[tuple[str, str], ...] = (
    (r"CUDA out of memory|OutOfMemoryError", "cuda_oom"),
    (r"ECC error|fallen off the bus|Xid", "gpu_hardware"),
    (r"CUDA error|illegal memory access|device-side assert|CUBLAS_STATUS", "cuda_error"),
    (r"Watchdog caught collective operation timeout|Timed out waiting", "nccl_timeout"),
    (r"NCCL error|ncclSystemError|ncclRemoteError|Connection closed by peer|Connection reset", "nccl_error"),
    (r"exitcode: -9|OOMKilled|killed by signal: Killed|SIGKILL", "host_oom"),
    (r"DataLoader worker", "dataloader_error"),
    (r"No space left|Input/output error|Stale file handle", "storage_io"),
    (r"PytorchStreamWriter|PytorchStreamReader|state_dict", "checkpoint_error"),
    (r"loss is nan|nan loss|OVERFLOW", "nan_loss"),
    (r"Rendezvous|TCPStore|client socket", "rendezvous_error"),
    (r"SIGTERM|preempt", "preempted"),
    (r"Traceback|Error:", "python_exception"),
)
_KEYWORDS = [(re.compile(p, re.I if c not in ("nan_loss",) else 0), c) for p, c in KEYWORDS]
_RANK = re.compile(r"\[rank(\d+)\]|\[Rank (\d+)\]")


def keyword_table(text: str) -> Answer:
    lines = text.splitlines()
    for pattern, category in _KEYWORDS:
        for line in lines:
            if pattern.search(line):
                m = _RANK.search(line)
                return Answer(category, int(m.group(1) or m.group(2)) if m else None)
    return Answer("unknown", None)


def last_traceback(path: Path) -> Answer:
    from bench import score_diagnosis
    from gangscope.parsers.records import TraceRecord
    from gangscope.pipeline.run import replay

    try:
        result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), lambda batch: None)
    except Exception as exc:  # the baseline rests on gangscope's parsers: say so, do not stop
        return Answer(None, None, "traceback", f"{type(exc).__name__}: {exc}")
    traces = [r for r in result.digest.all_records() if isinstance(r, TraceRecord)]
    traces.sort(key=lambda t: (t.time or "", t.seq))
    guess = score_diagnosis.last_traceback(traces, empty="unknown")
    return Answer(guess.category, guess.rank)


def gangscope_answer(path: Path, command: list[str], timeout: float) -> Answer:
    try:
        done = subprocess.run([*command, "diagnose", str(path), "--json"], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})  # fmt: skip
    except subprocess.TimeoutExpired:
        return Answer(None, None, "timeout", f"over {timeout:g} s")
    if "Traceback (most recent call last)" in done.stderr:
        return Answer(None, None, "traceback", done.stderr.strip().splitlines()[-1][:200])
    try:
        diagnoses = json.loads(done.stdout)
    except ValueError:
        return Answer(None, None, "no json", f"exit {done.returncode}: {done.stderr.strip()[:200]}")
    if not diagnoses:
        return Answer(None, None, "empty", "[]")
    chosen = next((d for d in diagnoses if d.get("category") not in ("success", "running")), diagnoses[0])
    rank = (chosen.get("first_failure") or {}).get("rank")
    summary = str(chosen.get("summary") or "")
    problem = "isolated" if summary.startswith("gangscope could not diagnose") else ""
    if len(diagnoses) > 1:
        problem = problem or "several"
    return Answer(chosen.get("category"), rank, problem, summary[:200])


def score(folder: Path, command: list[str], timeout: float = 120.0, workers: int = 4) -> list[Result]:
    labels = json.loads((folder / "labels.json").read_text())
    results = [Result(str(label["id"]), label) for label in labels]

    def one(result: Result) -> Result:
        path = folder / f"{result.id}.log"
        result.answers["gangscope"] = gangscope_answer(path, command, timeout)
        result.answers["keyword table"] = keyword_table(path.read_text(errors="replace"))
        result.answers["last traceback"] = last_traceback(path)
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, results))


def right(label: dict, answer: Answer) -> tuple[bool, bool | None]:
    """(category right, rank right or None when the label names no rank)."""
    want = label.get("first_failing_rank")
    return answer.category == label.get("category"), (None if want is None else answer.rank == want)


def totals(results: list[Result]) -> dict[str, dict[str, int]]:
    out = {}
    for method in METHODS:
        t = {"files": len(results), "category": 0, "ranked": 0, "rank": 0}
        for r in results:
            cat_ok, rank_ok = right(r.label, r.answers[method])
            t["category"] += cat_ok
            if rank_ok is not None:
                t["ranked"] += 1
                t["rank"] += rank_ok
        out[method] = t
    problems: dict[str, int] = {}
    for r in results:
        p = r.answers["gangscope"].problem
        if p:
            problems[p] = problems.get(p, 0) + 1
    out["gangscope"]["problems"] = problems  # type: ignore[assignment]
    return out


def print_table(results: list[Result], summary: dict) -> None:
    print(f"{'id':4}  {'label':28}  " + "  ".join(f"{m:28}" for m in METHODS) + "  gangscope's summary")
    for r in results:
        want_rank = r.label.get("first_failing_rank")
        cells = []
        for m in METHODS:
            a = r.answers[m]
            cat_ok, rank_ok = right(r.label, a)
            text = a.problem if a.category is None else a.category
            cell = f"{'' if cat_ok else '✗'}{text}/{'' if rank_ok in (None, True) else '✗'}{a.rank}"
            cells.append(cell[:28].ljust(28))
        label = f"{r.label.get('category')}/{want_rank}"
        g = r.answers["gangscope"]
        note = (f"[{g.problem}] " if g.problem else "") + g.detail
        print(f"{r.id:4}  {label:28}  " + "  ".join(cells) + "  " + note[:110])
    print()
    for m in METHODS:
        t = summary[m]
        n, ranked = t["files"], t["ranked"]
        print(f"{m:15} category {t['category']:3}/{n} = {t['category'] / n:6.1%}   "
              f"first-failing rank {t['rank']:3}/{ranked} = {(t['rank'] / ranked if ranked else 0):6.1%} (where labeled)")  # fmt: skip
    problems = summary["gangscope"].get("problems") or {}
    print("gangscope: " + (", ".join(f"{k} {v}" for k, v in sorted(problems.items())) or "no traceback, no empty answer"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", action="store_true", help="per-file results and totals as JSON")
    parser.add_argument("--gangscope", default=None, help="the command to run (default: this Python's gangscope)")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args(argv)
    if not (args.folder / "labels.json").is_file():
        print(f"score_eval: no labels.json in {args.folder}", file=sys.stderr)
        return 2
    command = args.gangscope.split() if args.gangscope else [sys.executable, "-m", "gangscope"]
    # import the baseline's modules before the threads do: two threads importing `bench` at once
    # could see it half-initialised ("cannot import name 'score_diagnosis' from 'bench'")
    from bench import score_diagnosis  # noqa: F401
    from gangscope.pipeline.run import replay  # noqa: F401

    results = score(args.folder, command, workers=args.workers)
    summary = totals(results)
    if args.json:
        rows = [{"id": r.id, "label": [r.label.get("category"), r.label.get("first_failing_rank")],
                 **{m: vars(a) for m, a in r.answers.items()}} for r in results]  # fmt: skip
        print(json.dumps({"files": rows, "totals": summary}, indent=1))
    else:
        print_table(results, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
