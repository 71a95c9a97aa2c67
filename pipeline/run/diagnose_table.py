"""The table `gangscope diagnose` prints: one attempt per row, in the conventions of kubectl.

Upper-case headers, columns two spaces apart, no borders. In a terminal the table fits its
width: the columns on one line and the summary on the next, indented, cut with an ellipsis
(`-o wide` prints everything on one line, uncut, as `kubectl -o wide` does). Piped, nothing is
cut. Every cell is literal text: rich markup in a log line (`[bold red]`, `[/INST]`) is shown
as written, and control characters (an ANSI escape in a log) are shown escaped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from rich.cells import cell_len
from rich.text import Text

GAP = "  "
ELLIPSIS = "…"
SUMMARY_INDENT = "  "
MIN_SUMMARY = 40  # below this, the summary goes on its own line
MIN_FLEX = 8  # job and pod columns are never cut narrower
OUTCOME_STYLE = {"failed": "bold red", "evicted": "bold yellow", "succeeded": "green", "running": "cyan"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[\t\n\r]+")


def literal(value: Any) -> str:
    """A value from a log as one line of plain text: tabs and newlines become spaces, every
    other control character its escape (`\\x1b`), so that nothing from a log drives the terminal."""
    if value is None:
        return ""
    text = _SPACES.sub(" ", str(value))
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass
class Row:
    job: str
    attempt: str
    outcome: str
    category: str
    rank: str
    pod: str
    summary: str
    exception: str = ""
    node: str = ""
    time: str = ""
    confidence: str = ""


def rows_of(diagnoses: Iterable[Any]) -> list[Row]:
    """The cells of each diagnosis (records or their decoded JSON), as literal text."""
    out = []
    for d in diagnoses:
        get = d.get if isinstance(d, dict) else (lambda name, d=d: getattr(d, name, None))
        ff = get("first_failure") or {}
        confidence = get("confidence")
        out.append(Row(
            job=literal(get("job")), attempt=literal(get("attempt")), outcome=literal(get("outcome")),
            category=literal(get("category")), rank=literal(ff.get("rank")), pod=literal(ff.get("pod")),
            summary=literal(get("summary")), exception=literal(get("exception_type")), node=literal(ff.get("node")),
            time=literal(ff.get("time")), confidence=f"{confidence:.2f}" if isinstance(confidence, (int, float)) else "",
        ))
    return out


COMPACT = (("JOB", "job"), ("#", "attempt"), ("OUTCOME", "outcome"), ("CATEGORY", "category"), ("RANK", "rank"),
           ("POD", "pod"))
WIDE = COMPACT[:4] + (("EXCEPTION", "exception"), ("RANK", "rank"), ("POD", "pod"), ("NODE", "node"),
                      ("FIRST FAILURE", "time"), ("CONF", "confidence"), ("SUMMARY", "summary"))
RIGHT = {"attempt", "rank", "confidence"}


def render(diagnoses: Iterable[Any], width: int | None = None, wide: bool = False) -> list[Text]:
    """The table as lines. `width`: the terminal's columns (None: nothing is cut); `wide`: every
    column, one line per attempt, nothing cut."""
    rows = rows_of(diagnoses)
    if wide:
        return _lines(rows, WIDE, {})
    widths = {field: max([cell_len(h)] + [cell_len(getattr(r, field)) for r in rows]) for h, field in COMPACT}
    if width is None:
        return _lines(rows, COMPACT + (("SUMMARY", "summary"),), {})
    used = sum(widths.values()) + len(GAP) * len(COMPACT)
    if width - used >= MIN_SUMMARY:
        return _lines(rows, COMPACT + (("SUMMARY", "summary"),), {"summary": width - used})
    limits = _fit_flex(rows, widths, width - sum(w for f, w in widths.items() if f not in ("job", "pod"))
                       - len(GAP) * (len(COMPACT) - 1))
    lines = []
    header, *body = _lines(rows, COMPACT, limits)
    lines.append(header)
    for row, line in zip(rows, body):
        lines.append(line)
        if row.summary:
            summary = Text(SUMMARY_INDENT + row.summary, style="dim" if row.outcome == "succeeded" else "")
            summary.truncate(max(width, MIN_FLEX), overflow="ellipsis")
            lines.append(summary)
    return lines


def _fit_flex(rows: list[Row], widths: dict[str, int], room: int) -> dict[str, int]:
    """Widths of the job and pod columns that share `room` (the rest of the line). A pod that
    starts with its job's name can do without it (`…-worker-1`): the job gets the room first."""
    job, pod = widths["job"], widths["pod"]
    if job + pod <= room:
        return {}
    pod_short = max([cell_len("POD")] + [cell_len(_without_job(r.pod, r.job)) for r in rows])
    job_limit = min(job, max(room - pod_short, room // 2, MIN_FLEX))
    return {"job": job_limit, "pod": max(room - job_limit, MIN_FLEX)}


def _without_job(pod: str, job: str) -> str:
    name = job.rsplit("/", 1)[-1]
    if name and pod.startswith(name) and len(pod) > len(name):
        return ELLIPSIS + pod[len(name):]
    return pod


def _lines(rows: list[Row], columns, limits: dict[str, int]) -> list[Text]:
    cells = [[_cut(getattr(r, field), limits.get(field), field, r) for _, field in columns] for r in rows]
    widths = [max([cell_len(h)] + [cell_len(c[i]) for c in cells]) for i, (h, _) in enumerate(columns)]
    last = len(columns) - 1
    header = Text(style="bold")
    for i, (h, field) in enumerate(columns):
        header.append(_pad(h, widths[i], field, i == last))
        if i < last:
            header.append(GAP)
    out = [header]
    for row, values in zip(rows, cells):
        line = Text()
        for i, (value, (_, field)) in enumerate(zip(values, columns)):
            style = OUTCOME_STYLE.get(row.outcome, "") if field in ("outcome", "category") else ""
            if field == "category" and row.outcome == "succeeded":
                style = ""
            line.append(_pad(value, widths[i], field, i == last), style=style)
            if i < last:
                line.append(GAP)
        line.rstrip()
        out.append(line)
    return out


def _pad(value: str, width: int, field: str, last: bool) -> str:
    space = " " * (width - cell_len(value))
    if field in RIGHT:
        return space + value
    return value if last else value + space


def _cut(value: str, limit: int | None, field: str, row: Row) -> str:
    """`value` in at most `limit` cells: a summary cut at the end, a pod first without the job's
    name it starts with (the row names the job), then anything cut in the middle, where names
    that share a start and an end still differ."""
    if limit is None:
        return value
    if field == "pod":  # the column is cut: every pod without its job's name, alike
        value = _without_job(value, row.job)
    if cell_len(value) <= limit:
        return value
    if field == "summary":
        text = Text(value)
        text.truncate(limit, overflow="ellipsis")
        return text.plain
    return _middle(value, limit)


def _middle(value: str, limit: int) -> str:
    """`value` cut in the middle to `limit` cells, the end kept a little longer than the start."""
    if limit <= 1:
        return ELLIPSIS[:limit]
    room = limit - 1
    head_room = room // 2
    head, used = [], 0
    for ch in value:
        w = cell_len(ch)
        if used + w > head_room:
            break
        head.append(ch)
        used += w
    tail, tail_used = [], 0
    for ch in reversed(value):
        w = cell_len(ch)
        if used + tail_used + w > room:
            break
        tail.append(ch)
        tail_used += w
    return "".join(head) + ELLIPSIS + "".join(reversed(tail))
