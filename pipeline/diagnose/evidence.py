"""The proof of a diagnosis: the symptoms (what else failed, by category) and the evidence lines."""

from __future__ import annotations

import re
from typing import Any

from gangscope.parsers.records import ErrorRecord, Record
from gangscope.pipeline.diagnose.ranks import box_of_pod
from gangscope.pipeline.diagnose.root_cause import Failure
from gangscope.pipeline.diagnose.views import AttemptView


def symptoms_of(failures: list[Failure], root: Failure, suspects: list[int]) -> list[dict[str, Any]]:
    """Every failure but the root and the launcher summaries, grouped by category with its ranks and pods."""
    groups: dict[str, dict[str, Any]] = {}
    for f in failures:
        if f is root or f.tier in (1, 3):
            continue
        category = f.category
        g = groups.get(category)
        if g is None:  # (a setdefault made a dict and two sets for every failure, to throw away)
            g = groups[category] = {"category": category, "ranks": set(), "pods": set(), "count": 0}
        if f.rank is not None:
            g["ranks"].add(f.rank)
        if f.error.pod:
            g["pods"].add(f.error.pod)
        g["count"] += 1
    out = []
    for g in groups.values():
        g["ranks"] = sorted(g["ranks"])
        g["pods"] = sorted(g["pods"])
        out.append(g)
    return sorted(out, key=lambda g: (-len(g["ranks"]), -g["count"], g["category"]))


def evidence_of(view: AttemptView, root: Failure, failures: list[Failure], suspects: list[int]) -> list[dict[str, Any]]:
    """The root's line, its traceback and torchrun's box excerpt, then the first line of each other category (six at most)."""
    out: list[dict[str, Any]] = [error_evidence(root.error)]
    traces = {t.id: t for t in view.traces}
    trace = traces.get(root.error.trace_id or "")
    if trace is not None and trace.text:
        out.append(record_evidence(trace, _trace_excerpt(trace.text, quoted=root.error.message or "")))
    box = box_of_pod(view, root.error.pod)
    if box is not None:
        excerpt = _root_cause_excerpt(box.text)
        if excerpt:
            out.append(record_evidence(box, excerpt))
    seen = {root.category} if not suspects else set()
    for f in sorted(failures, key=lambda f: f.t):
        if f is root or f.tier != 2 and f.tier != 0 or f.category in seen:
            continue
        seen.add(f.category)
        out.append(error_evidence(f.error))
        if len(out) >= 6:
            break
    return out


# [h31f] A line that is only a traceback's header: an error read from its trace carries it as its line, and says nothing
# the summary could quote (its message does: dev 021, 805).
_HEADER_ONLY = re.compile(r"^\s*(?:\S+\s*)?Traceback \(most recent call last\):?\s*$")


def error_evidence(error: ErrorRecord) -> dict[str, Any]:
    """An error record as an evidence entry (its line; its message where the line is only a traceback's header)."""
    text = error.message if error.message and error.line and _HEADER_ONLY.match(error.line) else error.line or error.message
    return {"record_id": error.id, "kind": "error", "pod": error.pod, "rank": error.rank, "time": error.time,
            "text": text}  # fmt: skip


def record_evidence(record: Record, text: str) -> dict[str, Any]:
    """Any record as an evidence entry, with the given text."""
    return {"record_id": record.id, "kind": record.kind, "pod": record.pod, "rank": record.rank,
            "time": record.time, "text": text}  # fmt: skip


def _trace_excerpt(text: str, tail: int = 4, quoted: str = "") -> str:
    """The header and the last lines of a trace: where it was raised and what. [h32h] Where the message the summary quotes
    (`quoted`, the root error's message) is a line of the trace that the head and tail leave out (an earlier link of an
    exception chain: "The above exception was the direct cause of ..." / "During handling of ...", a sub-exception of an
    ExceptionGroup), that line is shown too, between "..." (the proof the summary quotes)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) <= tail + 1:
        return "\n".join(lines)
    kept = [lines[0], "  ...", *lines[-tail:]]
    said = _squash(quoted.splitlines()[0] if quoted.strip() else "").rstrip(":").strip()
    if len(said) >= QUOTED_LINE_CHARS and not any(said in _squash(ln) for ln in kept):
        at = next((i for i, ln in enumerate(lines[1:-tail], 1) if said in _squash(ln)), None)
        if at is not None:
            kept = [lines[0], *(["  ..."] if at > 1 else []), lines[at], *(["  ..."] if at < len(lines) - tail - 1 else []),
                    *lines[-tail:]]
    return "\n".join(kept)


# [h32h] the shortest quoted message looked for in a trace (shorter ones, a bare "OSError", say nothing a line would prove)
QUOTED_LINE_CHARS = 12


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _root_cause_excerpt(text: str) -> str | None:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Root Cause"):
            body = [ln for ln in lines[i : i + 9] if not set(ln.strip()) <= set("=")]
            return "\n".join(body)
    return None
