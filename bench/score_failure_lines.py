"""Score gangscope on the failure lines read from the frameworks' source (fixtures/formats/failure_lines.json).

    python -m bench.score_failure_lines            # the table: category right per family and half
    python -m bench.score_failure_lines --misses   # and every entry whose category is wrong
    python -m bench.score_failure_lines --json     # per-entry answers and the totals as JSON
    python -m bench.score_failure_lines --batch h24b   # one batch alone (entries with "batch": NAME; h22b's have none)

Each entry's `text` (a line in its printer's prefix, or an exception inside its traceback) is diagnosed as
a user would diagnose a pasted log: `replay` of one plain text file, in process. The answer is the category
of the first diagnosis that is not `success`/`running` (else the first), as bench/score_eval.py takes it.
Exit code 0 always (a score, not a gate).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from gangscope.pipeline.run import replay

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "fixtures" / "formats" / "failure_lines.json"
HALVES = ("build", "measure")
FIRST_BATCH = "h22b"  # the batch whose entries carry no `batch` field


def answer(text: str, folder: Path, name: str) -> str | None:
    """The category gangscope gives `text` as one plain-text log (None when it gives no diagnosis)."""
    path = folder / f"{name}.log"
    path.write_text(text if text.endswith("\n") else text + "\n")
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), lambda batch: None)
    diagnoses = result.diagnoses
    if not diagnoses:
        return None
    chosen = next((d for d in diagnoses if d.category not in ("success", "running")), diagnoses[0])
    return chosen.category


def in_batch(entries: list[dict], batch: str | None) -> list[dict]:
    """The entries of one batch (None: all). The first batch (h22b) wrote no `batch` field: its name stands for them."""
    if batch is None:
        return entries
    return [e for e in entries if e.get("batch", FIRST_BATCH) == batch]


def score(entries: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="failure-lines-") as tmp:
        return [{**e, "got": answer(e["text"], Path(tmp), e["id"])} for e in entries]


def table(rows: list[dict]) -> dict[str, dict[str, list[int]]]:
    """family -> half -> [right, total], with an `all` family."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: {h: [0, 0] for h in HALVES})
    for row in rows:
        for family in (row["family"], "all"):
            cell = out[family][row["half"]]
            cell[0] += row["got"] == row["category"]
            cell[1] += 1
    return dict(out)


def print_table(rows: list[dict], misses: bool) -> None:
    summary = table(rows)
    print(f"{'family':<26}{'build':>10}{'measure':>10}")
    for family in sorted(summary, key=lambda f: (f == "all", f)):
        cells = [f"{r}/{n}" for r, n in (summary[family][h] for h in HALVES)]
        print(f"{family:<26}{cells[0]:>10}{cells[1]:>10}")
    if misses:
        print()
        for row in rows:
            if row["got"] != row["category"]:
                print(f"{row['half']:<8}{row['id']:<34}want {row['category']:<18}got {row['got']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--misses", action="store_true", help="list the entries whose category is wrong")
    parser.add_argument("--json", action="store_true", help="per-entry answers and totals as JSON")
    parser.add_argument("--batch", default=None, help="score only the entries of this batch (h22b: the entries without a batch field)")
    args = parser.parse_args(argv)
    rows = score(in_batch(json.loads(args.table.read_text()), args.batch))
    if args.json:
        print(json.dumps({"entries": [{k: r[k] for k in ("id", "family", "half", "category", "got")} for r in rows],
                          "totals": table(rows)}, indent=1))  # fmt: skip
    else:
        print_table(rows, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
