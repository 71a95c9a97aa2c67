"""Audit what each failed attempt's one-sentence `summary` SAYS (issue 16: "`summary` names the cause, the rank and the
proof in one sentence; wrappers unwrapped"), on every labeled log, with no server:

    python -m bench.summary_audit                      # fixtures/eval/dev, fixtures/runs, ../shared/eval/diagnosis-dev
    python -m bench.summary_audit FOLDER ... --json    # per-summary failures and totals as JSON

tests/test_diagnose_summary_text.py checks that a summary READS as one sentence (no dump debris, no dangling ':', no cut
mid-word); this audit checks what the sentence says. Each failed attempt's summary (a diagnosis whose category is not
`success` / `running`) is tested mechanically (CHECKS, `problems`):

- one sentence: no newline, it ends once ('.', or the '...' of a cut, or the '!' / '?' its quoted message ends with; never
  '..' or '.:'), its double quotes are paired;
- category: names the category in words a user understands (CATEGORY_WORDS: the taxonomy's category -> words);
- grounded: says no more than the lines do: "killed" / "SIGKILL" only where a proving line shows a kill (a MemoryError or
  an allocator's "can't allocate memory" is a failed allocation, nothing was killed), "a DataLoader worker" only where a
  proving line names a worker (an exception raised while the DataLoader fetched in the training process has none);
- rank: names the first failing rank ("rank R" or a "ranks A-B,C" that holds R) when first_failure has one, and its pod
  when first_failure has one;
- proof: quotes the proof: a run of at least PROOF_CHARS characters of one evidence text (the whole text when shorter), or
  points to it (POINTERS: "torchrun's root-cause box" where the box is an evidence text);
- unwrapped: no launcher's wrapper left in the summary (torchrun's ChildFailedError box, a `[rankN]:` / `[defaultN]:` /
  mpirun `[1,0]<stderr>:` prefix, a `Traceback (most recent call last)` header, ANSI colour codes), and no timestamp
  prefix at the head of the quoted message (the summary's own "at <time>" is its words, not a wrapper);
- length: at most LENGTH_LIMIT characters in all;
- HTML-safe: no control character (C0, DEL, C1) and no lone surrogate (the report escapes markup, not these).

A log that cannot be diagnosed is a counted skip, never a traceback. Prints a table of failures by check and category
with example ids; exit code 0 always (a measure, not a gate).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from collections import Counter, defaultdict
from difflib import SequenceMatcher
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the shared judged set beside the checkout (../shared), or beside the folder of worktrees (../../shared)
SHARED = next((p / "shared" / "eval" / "diagnosis-dev" for p in (ROOT.parent, ROOT.parent.parent)
               if (p / "shared" / "eval" / "diagnosis-dev").is_dir()), ROOT.parent / "shared" / "eval" / "diagnosis-dev")
FOLDERS = (ROOT / "fixtures" / "eval" / "dev", ROOT / "fixtures" / "runs", SHARED)
CHECKS = ("one sentence", "category", "grounded", "rank", "proof", "unwrapped", "length", "HTML-safe")
LENGTH_LIMIT = 400
PROOF_CHARS = 16

#: The taxonomy's categories (SPEC rev. 2) in the words a user understands: the summary must say one of them.
CATEGORY_WORDS: dict[str, str] = {
    "cuda_oom": r"GPU memory|device memory|accelerator memory|OUT_OF_MEMORY|out of memory",
    "host_oom": r"host memory",
    "nccl_timeout": r"collective timeout|timed? ?out|timeout",
    "nccl_error": r"communication|connection|NCCL|gloo|peer",
    "cuda_error": r"CUDA|GPU|device",
    "gpu_hardware": r"GPU hardware|hardware fault|ECC|Xid|fallen off the bus",
    "dataloader_error": r"DataLoader|data loading|input pipeline|dataset",
    "storage_io": r"storage|I/O|disk|file",
    "checkpoint_error": r"checkpoint",
    "nan_loss": r"NaN|Inf|\bnan\b|\binf\b|non-finite|diverged|overflow",
    "python_exception": r"raised|exception",
    "preempted": r"stopped from outside|preempt|SIGTERM|SIGHUP|SIGINT|Ctrl-C",
    "time_limit": r"time limit",
    "rendezvous_error": r"rendezvous",
    "hang": r"progress|stuck|stall|hang",
    "pods_ready_timeout": r"ready|unschedulable",
    "node_failure": r"node",
    "unknown": r"crashed|failed|error|stopped|ended|ends|killed|aborted",
}

#: Claims a summary may make only where a proving line (an evidence text) shows them: (claim in the summary, what a line
#: must show, the check's words).
GROUNDS: tuple[tuple[str, str, str], ...] = (
    (r"\bkilled\b|\bSIGKILL\b|\bOOM killer\b",
     # bash's "Killed" in its translations (po/zh_CN.po "已杀死", po/fr.po "Processus arrêté"), the kubelet's eviction ("The node
     # was low on resource: memory."), Ray's memory monitor ("Memory on the node ... Ray killed this worker")
     r"(?i)kill|signal 9|signal: 9|SIGKILL|(?<![\w-])-9\b|\b137\b|oom_kill|OOMKilled|Out Of Memory|out of memory|memory limit|"
     r"evict|memory pressure|low on memory|low on resource|Memory on the node|memory budget|TERM_MEMLIMIT|reap|已杀死|arrêté",
     "a kill no line shows"),
    (r"\bDataLoader worker\b",
     r"(?i)worker|DataLoader process",
     "a DataLoader worker no line shows"),
)

# torchrun's ChildFailedError box, the launchers' line prefixes, a traceback header, ANSI colour codes.
_WRAPPERS = re.compile(
    r"ChildFailedError|Root Cause \(first observed failure\)|error_file:|={10,}|"
    r"\[rank\d+\]:|\[default\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|\[\d+\]<std(?:out|err)>:|"
    r"Traceback \(most recent call last\)|\x1b\[|\[\d{1,3}(?:;\d{1,3})*m(?=\W|$)")
# A log line's own time at the head of a quoted message: ISO / syslog-style dates, glog's "I1205 10:00:00.123".
_TIME_PREFIX = re.compile(r"^\[?(?:\d{4}-\d\d-\d\d[T _]\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d|\d\d:\d\d:\d\d[.,]\d)")
_EFFECTS = re.compile(r"; (?:\d+ ranks? then |the job's controller says )")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]|[\ud800-\udfff]")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _ranks_named(summary: str) -> set[int]:
    """Every rank "rank R" / "ranks A-B,C" in a summary names."""
    out: set[int] = set()
    for m in re.finditer(r"\branks? (\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)", summary):
        for part in m.group(1).split(","):
            a, _, b = part.partition("-")
            out.update(range(int(a), int(b or a) + 1))
    return out


def quote_of(summary: str) -> str:
    """The quoted message of a summary: what follows the first ": " of its cause, before the other ranks' effects."""
    head = _EFFECTS.split(summary, 1)[0]
    return head.split(": ", 1)[1] if ": " in head else ""


#: Words of a summary that point to an evidence text rather than quote it: (the summary's words, what the text shows).
POINTERS: tuple[tuple[str, str], ...] = (
    # torchrun's failure box, said in words (pipeline/diagnose/summary.py _WRAPPER_HEADS): the box's lines are the evidence
    (r"torchrun's (?:root-cause|failure) box", r"ChildFailedError|Root Cause \(first observed failure\)"),
)


def _quotes_proof(summary: str, evidence: list[dict]) -> bool:
    texts = [_squash(str(e.get("text") or "")) for e in evidence]
    texts = [t for t in texts if t]
    if not texts:
        return False
    if any(re.search(said, summary) and any(re.search(shown, t) for t in texts) for said, shown in POINTERS):
        return True
    for text in texts:
        need = min(PROOF_CHARS, len(text))
        m = SequenceMatcher(None, summary, text, autojunk=False).find_longest_match(0, len(summary), 0, len(text))
        if m.size >= need:
            return True
    return False


def problems(d: dict) -> list[str]:
    """The checks a failed attempt's diagnosis (its JSON dict) fails, each as "check: what"."""
    summary = str(d.get("summary") or "")
    category = str(d.get("category") or "unknown")
    first = d.get("first_failure") or {}
    evidence = [e for e in (d.get("evidence") or []) if isinstance(e, dict)]
    proof_text = " ".join(str(e.get("text") or "") for e in evidence)
    found = []
    quote = quote_of(summary)
    if "\n" in summary or "\r" in summary:
        found.append("one sentence: a newline")
    if not re.search(r"(?:[^.:;,]\.|\.\.\.|[!?])$", summary):
        found.append("one sentence: no final period")
    if summary.count('"') % 2:
        found.append("one sentence: unpaired double quote")
    if not re.search(CATEGORY_WORDS.get(category, r"$^"), summary, re.IGNORECASE if category != "nan_loss" else 0):
        found.append(f"category: no words for {category}")
    for claim, shown_by, words in GROUNDS:
        said = _EFFECTS.split(summary, 1)[0]  # the cause's clause: what the other ranks did is theirs
        if re.search(claim, said.replace(quote, "") if quote else said) and not re.search(shown_by, proof_text):
            found.append(f"grounded: {words}")
    if first.get("rank") is not None and int(first["rank"]) not in _ranks_named(summary):
        found.append("rank: first failing rank not named")
    if first.get("pod") and str(first["pod"]) not in summary:
        found.append("rank: first failing pod not named")
    if not _quotes_proof(summary, evidence):
        found.append("proof: no evidence text quoted")
    if _WRAPPERS.search(summary):
        found.append("unwrapped: " + _WRAPPERS.search(summary).group(0)[:24])
    if quote and _TIME_PREFIX.search(quote):
        found.append("unwrapped: timestamp at the head of the quote")
    if len(summary) > LENGTH_LIMIT:
        found.append(f"length: over {LENGTH_LIMIT}")
    if _CONTROL.search(summary):
        found.append("HTML-safe: control character")
    return found


def diagnoses_of(path: Path) -> list[dict]:
    """The failed attempts' diagnoses of one log (a file, or a run's folder of pods), as `gangscope diagnose --json` gives
    them."""
    from gangscope.pipeline.run.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["diagnose", str(path), "--json"])
    return [d for d in json.loads(out.getvalue()) if d.get("category") not in ("success", "running")]


def inputs_of(folder: Path) -> list[tuple[str, Path]]:
    """(id, path) of each labeled log: NNN.log files, or fixtures/runs' scenario folders."""
    if (folder / "labels.json").is_file():
        return [(str(label["id"]), folder / f"{label['id']}.log") for label in json.loads((folder / "labels.json").read_text())]
    return [(p.name, p) for p in sorted(folder.iterdir()) if (p / "manifest.json").is_file()]


def audit(folders: list[Path]) -> dict:
    rows, skipped = [], []
    for folder in folders:
        for ident, path in inputs_of(folder):
            try:
                diagnoses = diagnoses_of(path)
            except (Exception, SystemExit) as exc:  # a counted skip, never a traceback
                skipped.append({"folder": folder.name, "id": ident, "why": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            for d in diagnoses:
                rows.append({"folder": folder.name, "id": ident, "category": d.get("category"),
                             "summary": d.get("summary"), "problems": problems(d)})  # fmt: skip
    return {"rows": rows, "skipped": skipped, "totals": totals(rows)}


def totals(rows: list[dict]) -> dict:
    by_check = Counter(p.split(":")[0] for r in rows for p in set(q.split(":")[0] for q in r["problems"]))
    return {"summaries": len(rows), "failing": sum(1 for r in rows if r["problems"]),
            "by_check": {c: by_check.get(c, 0) for c in CHECKS}}


def print_table(result: dict) -> None:
    rows = result["rows"]
    table: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for p in r["problems"]:
            table[p][r["category"]].append(f"{r['folder']}/{r['id']}")
    print(f"{'failure':58} {'category':18} {'n':>4}  examples")
    for p in sorted(table, key=lambda p: (CHECKS.index(p.split(":")[0]), p)):
        for cat, ids in sorted(table[p].items(), key=lambda kv: -len(kv[1])):
            print(f"{p[:58]:58} {cat:18} {len(ids):4}  {' '.join(ids[:4])}")
    t = result["totals"]
    print(f"\n{t['summaries']} failed attempts' summaries, {t['failing']} fail a check; skipped {len(result['skipped'])}")
    print("by check: " + ", ".join(f"{c} {n}" for c, n in t["by_check"].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="*", default=[f for f in FOLDERS if f.is_dir()])
    parser.add_argument("--json", action="store_true", help="every summary with its failures, and the totals")
    args = parser.parse_args(argv)
    result = audit(args.folders)
    if args.json:
        json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
