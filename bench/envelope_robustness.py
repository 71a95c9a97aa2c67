"""Does gangscope read a log the same when a Kubernetes user's tool put its head on every line? [h26c]

    python -m bench.envelope_robustness                       # fixtures/eval/dev, every form
    python -m bench.envelope_robustness --folder /work/shared/eval/diagnosis-dev --json
    python -m bench.envelope_robustness --folder fixtures/eval/heldout --totals-only

Each `NNN.log` of a folder (its ids from `labels.json`) is diagnosed as it is (`plain`), then wrapped
line by line in each form below, written to a temporary file and diagnosed again, each in its own
process as bench/score_eval runs it (`gangscope diagnose FILE --json`, the first diagnosis that is
not success/running). Per form: how many wrapped logs keep the plain log's category, and its
first-failing rank where the plain answer names one; and how many are right against the label,
beside the plain log's own count. The forms, with the source that prints each head
(parsers/envelopes.py cites them in full):

- kubectl-ts:  `kubectl logs --timestamps`: kubelet's `2006-01-02T15:04:05.000000000Z07:00` and a space
               (kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go timeFormatOut)
- kubectl-prefix: `kubectl logs --prefix`: `[pod/<pod>/<container>] ` (kubernetes/kubectl pkg/cmd/logs/logs.go)
- kubectl-prefix-ts: both (`--prefix --timestamps`: the prefix, then the kubelet's time)
- stern:       `<pod> <container> <line>` (stern/stern cmd/cmd.go, default template, no colour)
- loki:        logcli's default `<RFC 3339> {labels} <line>`, the line trimmed (grafana/loki pkg/logcli/output/default.go),
               oldest first as `logcli query --forward` prints it
- gcp:         a Cloud Logging LogEntry a line: textPayload, timestamp, resource.labels (pod_name, container_name,
               namespace_name), logName .../stderr (google/logging/v2/log_entry.proto)

Times are made up, 10 ms apart from 2024-05-01T10:00:00Z, so that no gap between lines means anything.
--totals-only prints the totals alone (for a held-out folder, whose logs are not to be read).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.score_eval import Answer, gangscope_answer

POD, CONTAINER, NAMESPACE = "trainer-worker-0", "pytorch", "team-a"
_BASE = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)


def _time(k: int, digits: int) -> str:
    t = _BASE + timedelta(milliseconds=10 * k)
    head = t.strftime("%Y-%m-%dT%H:%M:%S")
    if digits == 0:
        return head + "Z"
    return f"{head}.{t.microsecond * 1000:09d}"[: 20 + digits] + "Z"


def _kubectl_ts(k: int, line: str) -> str:
    return f"{_time(k, 9)} {line}"


def _kubectl_prefix(k: int, line: str) -> str:
    return f"[pod/{POD}/{CONTAINER}] {line}"


def _kubectl_prefix_ts(k: int, line: str) -> str:
    return f"[pod/{POD}/{CONTAINER}] {_time(k, 9)} {line}"


def _stern(k: int, line: str) -> str:
    return f"{POD} {CONTAINER} {line}"


def _loki(k: int, line: str) -> str:
    labels = f'{{container="{CONTAINER}", namespace="{NAMESPACE}", pod="{POD}"}}'
    return f"{_time(k, 0)} {labels} {line.strip()}"


def _gcp(k: int, line: str) -> str:
    return json.dumps({
        "insertId": f"{k:016x}", "textPayload": line, "timestamp": _time(k, 9), "severity": "ERROR",
        "resource": {"type": "k8s_container", "labels": {"project_id": "proj", "location": "us-central1",
                     "cluster_name": "gpu", "namespace_name": NAMESPACE, "pod_name": POD, "container_name": CONTAINER}},
        "labels": {"k8s-pod/app": "trainer", "compute.googleapis.com/resource_name": "gke-gpu-node-1"},
        "logName": "projects/proj/logs/stderr", "receiveTimestamp": _time(k + 1, 9)})


FORMS = {"kubectl-ts": _kubectl_ts, "kubectl-prefix": _kubectl_prefix, "kubectl-prefix-ts": _kubectl_prefix_ts,
         "stern": _stern, "loki": _loki, "gcp": _gcp}


def wrap(text: str, form: str) -> str:
    """The log as the form's tool prints it: every line with its head (a last line ended by a newline adds none)."""
    lines = text.split("\n")
    end = ""
    if lines and lines[-1] == "":
        lines.pop()
        end = "\n"
    make = FORMS[form]
    return "\n".join(make(k, line) for k, line in enumerate(lines)) + end


def _same(a: Answer, b: Answer) -> tuple[bool, bool | None]:
    return a.category == b.category, (None if b.rank is None else a.rank == b.rank)


def run(folder: Path, forms: list[str], command: list[str], workers: int, timeout: float) -> dict:
    labels = json.loads((folder / "labels.json").read_text())
    per_file: dict[str, dict[str, Answer]] = {}
    with tempfile.TemporaryDirectory(prefix="gangscope-envelopes-") as tmp:
        def one(label: dict) -> tuple[str, dict[str, Answer]]:
            ident = str(label["id"])
            path = folder / f"{ident}.log"
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            answers = {"plain": gangscope_answer(path, command, timeout)}
            for form in forms:
                wrapped = Path(tmp) / form / f"{ident}.log"
                wrapped.parent.mkdir(exist_ok=True)
                wrapped.write_text(wrap(text, form), encoding="utf-8", errors="surrogateescape")
                answers[form] = gangscope_answer(wrapped, command, timeout)
                wrapped.unlink()
            return ident, answers

        for form in forms:
            (Path(tmp) / form).mkdir()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            per_file = dict(pool.map(one, labels))
    by_id = {str(label["id"]): label for label in labels}
    totals = {}
    for form in ["plain", *forms]:
        t = {"files": len(per_file), "keep_category": 0, "plain_ranked": 0, "keep_rank": 0, "right_category": 0,
             "ranked": 0, "right_rank": 0, "changed": []}
        for ident, answers in per_file.items():
            a, plain, label = answers[form], answers["plain"], by_id[ident]
            cat, rank = _same(a, plain)
            t["keep_category"] += cat
            if rank is not None:
                t["plain_ranked"] += 1
                t["keep_rank"] += rank
            t["right_category"] += a.category == label.get("category")
            if label.get("first_failing_rank") is not None:
                t["ranked"] += 1
                t["right_rank"] += a.rank == label.get("first_failing_rank")
            if not cat or rank is False:
                t["changed"].append(f"{ident}: {plain.category}/{plain.rank} -> {a.category or a.problem}/{a.rank}")
        totals[form] = t
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, action="append",
                        help="an eval folder (NNN.log + labels.json); repeatable; default fixtures/eval/dev")
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated forms (default: all): " + ", ".join(FORMS))
    parser.add_argument("--gangscope", default=None, help="the command to run (default: this Python's gangscope)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", action="store_true", help="totals (and the files whose answer changed) as JSON")
    parser.add_argument("--totals-only", action="store_true", help="no file ids (a held-out folder)")
    args = parser.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        parser.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join(FORMS)}")
    command = args.gangscope.split() if args.gangscope else [sys.executable, "-m", "gangscope"]
    out = {}
    for folder in args.folder or [Path("fixtures/eval/dev")]:
        if not (folder / "labels.json").is_file():
            print(f"envelope_robustness: no labels.json in {folder}", file=sys.stderr)
            return 2
        totals = run(folder, forms, command, args.workers, args.timeout)
        if args.totals_only:
            for t in totals.values():
                t.pop("changed")
        out[str(folder)] = totals
        if not args.json:
            print(f"{folder}")
            for form, t in totals.items():
                print(f"  {form:18} keeps category {t['keep_category']:3}/{t['files']}  rank {t['keep_rank']:3}/{t['plain_ranked']}"
                      f"   right: category {t['right_category']:3}/{t['files']}  rank {t['right_rank']:3}/{t['ranked']}")
                for line in t.get("changed", [])[:40] if form != "plain" else []:
                    print(f"      {line}")
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
