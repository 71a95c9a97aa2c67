"""report.html: one self-contained page per run (inline CSS and SVG, no script, no CDN).

`render_report(records, diagnoses, timelines=...)` builds a plain view model per job here
(trace groups, errors by category, epoch progress, chart geometry) and renders
templates/report.html.j2 with autoescape on: every string that came from a log is
escaped by Jinja. Jobs with gang events get templates/timeline.html.j2 (`job.timeline`): the
timelines come as plain data from the caller (pipeline/diagnose/back_half.py draws them: attempts,
events and each diagnosed first failure from the logs). The report depends on records only.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, TextIO

import jinja2

import gangscope.templates

from gangscope.parsers import times
from gangscope.parsers.records import Record, from_dict, job_key
from gangscope.pipeline.isolation import StageFailures, unit_of_work
from gangscope.pipeline.report.section_spool import SpooledSections

TEMPLATES = Path(gangscope.templates.__file__).parent

CHART_W, CHART_H = 560, 220
PAD_L, PAD_R, PAD_T, PAD_B = 64, 16, 28, 40  # room for the y tick labels, the title and the x axis
SERIES_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
MAX_SERIES = len(SERIES_COLORS)
MAX_EXAMPLE_LINES = 60
EVIDENCE_SHOWN = 3  # evidence items of an attempt shown; the rest behind <details>
EVIDENCE_LINES = 8  # lines of one evidence text shown; the rest behind <details>
EVIDENCE_CHARS = 800  # and at most this many characters (a state dict's key list is one 30,000-character line)
PROGRESS_SHOWN = 8  # progress rows of a job shown; the rest behind <details>
FAILED = ("failed", "evicted")


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # everything from a log is escaped
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clock"] = clock
    return env


def clock(value: str | None) -> str:
    """An RFC 3339 time as a table shows it: `2026-03-14 09:20:30` (the whole time is in the records)."""
    if not value:
        return ""
    text = str(value)
    return f"{text[:10]} {text[11:19]}" if len(text) >= 19 and text[10] in "Tt " else text


def render_report(records: Iterable[Record | dict], diagnoses: Iterable[Record | dict],
                  failures: StageFailures | None = None, timelines: Mapping[str, dict] | None = None) -> str:
    """The whole report as one HTML string (`write_report` into a string)."""
    out = io.StringIO()
    write_report(out, records, diagnoses, failures=failures, timelines=timelines)
    return out.getvalue()


def write_report(out: TextIO, records: Iterable[Record | dict], diagnoses: Iterable[Record | dict],
                 failures: StageFailures | None = None, timelines: Mapping[str, dict] | None = None) -> None:
    """`write_report_in_parts` with every record and diagnosis in one part."""
    write_report_in_parts(out, [(records, diagnoses)], failures=failures, timelines=timelines)


def write_report_in_parts(out: TextIO, parts: Iterable[tuple[Iterable[Record | dict], Iterable[Record | dict]]],
                          failures: StageFailures | None = None, timelines: Mapping[str, dict] | None = None) -> None:
    """The report written to `out` piece by piece as the template renders (a run of 100k pods
    made a 110 MB page, held whole and in its ~1M pieces before; `out` must seek and truncate).

    parts: (records, diagnoses) of a part of the jobs at a time, every record and diagnosis of a
    job (by job_key) in one part (JobDigest.parts beside SpooledDiagnoses.parts): only one part's
    are held at a time; the sections wait on disk (report/section_spool.py).
    timelines: job -> its gang timeline (plain data, as back_half.Findings.timelines has it);
    a job without one has no timeline drawn.

    One job's section is one unit of work (pipeline/isolation.py): a section that cannot be
    built or rendered shows the job with the error instead, the rest of the report is kept,
    and the failure is counted in `failures` (stage "report")."""
    failures = failures if failures is not None else StageFailures()
    jobs = SpooledSections(_sections_of_parts(parts, failures, timelines), keyed=True)  # built once, kept on disk
    jobs.sort()  # jobs in trouble first
    template = _env().get_template("report.html.j2")
    start = out.tell()
    try:
        try:
            out.writelines(template.generate(jobs=jobs, **_overview_of(jobs.overview_parts), title="gangscope report"))
        except Exception:
            # Start again: find the sections that do not render, one at a time, and show their jobs with the error.
            out.seek(start)
            out.truncate()
            for i, job in enumerate(jobs):
                with unit_of_work(failures, "report", position=job["name"], section="render", job=job["name"]) as unit:
                    template.render(jobs=[job], **_overview_of([job]), title="gangscope report")
                if unit.failed:
                    jobs[i] = failed_section(job["name"], unit.failed)
            out.writelines(template.generate(jobs=jobs, **_overview_of(jobs.overview_parts), title="gangscope report"))
    finally:
        jobs.close()


def _overview_of(jobs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the template's overview reads: its rows (made again as they are iterated, one job at a
    time) and the attempts counted, by outcome (one pass over the rows)."""
    counts = {"attempts": 0, "failed": 0, "evicted": 0, "running": 0, "succeeded": 0}
    for row in overview_rows(jobs):
        if row["number"]:
            counts["attempts"] += 1
            if row["outcome"] in counts:
                counts[row["outcome"]] += 1
    return {"overview": _Rows(jobs), "attempt_counts": counts}


class _Rows:
    """`overview_rows(jobs)` made again each time it is iterated; true when there is a job (each
    job has a row)."""

    def __init__(self, jobs: Sequence[dict[str, Any]]):
        self._jobs = jobs

    def __bool__(self) -> bool:
        return len(self._jobs) > 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return overview_rows(self._jobs)


def overview(jobs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per job attempt, in the order of the sections below (jobs in trouble first),
    each with the anchor of its attempt there."""
    return list(overview_rows(jobs))


def overview_rows(jobs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`overview`'s rows one at a time."""
    for i, job in enumerate(jobs, start=1):
        for a in job["attempts"]:
            yield {"job": job["name"], "anchor": f"job-{i}-attempt-{a['number']}", "job_anchor": f"job-{i}",
                   "signals": signals_said(job["signals"], a["number"]), **a}
        if not job["attempts"]:
            yield {"job": job["name"], "anchor": f"job-{i}", "job_anchor": f"job-{i}", "number": None,
                   "outcome": None, "category": None, "first_failure": {}, "duration_s": None,
                   "gpu_h_lost": None, "gpu_h_estimated": False, "exception_type": None}


def signals_said(signals: list[Any], attempt: int) -> str:
    """The stragglers and stalls of one attempt in a few words ('straggler rank 3 · stall of 4 ranks'):
    a run that succeeded slowly is not all well."""
    mine = [s for s in signals if (s.attempt or 1) == attempt]
    slow = sorted({s.rank for s in mine if s.signal == "straggler" and s.rank is not None})
    stalled = {(s.pod, s.rank) for s in mine if s.signal == "stall"}
    said = []
    if slow:
        said.append(f"straggler{'s' if len(slow) > 1 else ''} rank {_ranks_text(slow)}")
    elif any(s.signal == "straggler" for s in mine):
        said.append("straggler")
    if stalled:
        said.append(f"stall of {len(stalled)} rank{'s' if len(stalled) > 1 else ''}" if len(stalled) > 1 else "stall")
    return " · ".join(said)


def failed_section(name: str, exc: BaseException) -> dict[str, Any]:
    """A job whose section could not be made: its name and the error."""
    return {"name": name, "error": f"{type(exc).__name__} while building its section", "attempts": [],
            "trace_groups": [], "errors": [], "progress": [], "progress_more": [], "charts": [], "events": [], "signals": [],
            "timeline": None}


def build_jobs(records: list[Record], diagnoses: list[Record], failures: StageFailures | None = None,
               timelines: Mapping[str, dict] | None = None) -> list[dict[str, Any]]:
    """The view model of each job's section, jobs in trouble first (`job_sections`, in a list)."""
    return list(job_sections(records, diagnoses, failures, timelines))


def job_sections(records: list[Record], diagnoses: list[Record], failures: StageFailures | None = None,
                 timelines: Mapping[str, dict] | None = None) -> Iterator[dict[str, Any]]:
    """The view model of each job's section, one at a time, jobs in trouble first. With `failures`,
    a section that raises is counted there and shown as `failed_section`; without, it raises."""
    by_job = _records_by_job(records)
    diag_by_job = _diagnoses_by_job(diagnoses)
    names = sorted(set(by_job) | set(diag_by_job), key=lambda name: _trouble_first(diag_by_job, name))
    for name in names:
        yield _section_or_failed(name, by_job.get(name, {}), diag_by_job, failures, timelines)


def _sections_of_parts(parts: Iterable[tuple[Iterable[Record | dict], Iterable[Record | dict]]],
                       failures: StageFailures | None, timelines: Mapping[str, dict] | None) -> Iterator[tuple[tuple, dict[str, Any]]]:
    """(sort key, section) of each job, a part of the records and diagnoses at a time (a job's all
    in one part): the jobs with records, then the diagnosed jobs with none; in no particular
    order (the caller sorts them by key: jobs in trouble first)."""
    for records, diagnoses in parts:
        diag_by_job = _diagnoses_by_job(from_dict(d) if isinstance(d, dict) else d for d in diagnoses)
        by_job = _records_by_job(from_dict(r) if isinstance(r, dict) else r for r in records)
        for name in [*sorted(by_job), *sorted(set(diag_by_job) - set(by_job))]:
            yield _trouble_first(diag_by_job, name), _section_or_failed(name, by_job.get(name, {}), diag_by_job,
                                                                        failures, timelines)
        del by_job, diag_by_job


def _records_by_job(records: Iterable[Record]) -> dict[str, dict[str, list[Record]]]:
    by_job: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.kind != "diagnosis":
            by_job[job_key(r)][r.kind].append(r)
    return by_job


def _diagnoses_by_job(diagnoses: Iterable[Record]) -> dict[str, list[Record]]:
    diag_by_job: dict[str, list[Record]] = defaultdict(list)
    for d in diagnoses:
        diag_by_job[d.job or job_key(d)].append(d)
    return diag_by_job


def _trouble_first(diag_by_job: Mapping[str, list[Record]], name: str) -> tuple:
    """Jobs whose latest attempt failed or was evicted first: they are what the reader came for."""
    latest = max(diag_by_job.get(name, []), key=lambda d: d.attempt, default=None)
    return (getattr(latest, "outcome", None) not in ("failed", "evicted"), name)


def _section_or_failed(name: str, kinds: dict[str, list[Record]], diag_by_job: Mapping[str, list[Record]],
                       failures: StageFailures | None, timelines: Mapping[str, dict] | None) -> dict[str, Any]:
    section = None
    with unit_of_work(failures, "report", position=name, section="job", job=name) as unit:
        section = _job_section(name, kinds, diag_by_job.get(name, []), (timelines or {}).get(name))
    return failed_section(name, unit.failed) if unit.failed else section


def _job_section(name: str, kinds: dict[str, list[Record]], diagnoses: list[Record], timeline: dict | None) -> dict[str, Any]:
    spans = _attempt_spans(kinds)
    gang = {a["number"]: a for a in (timeline or {}).get("attempts") or []}
    outcomes = {d.attempt: d.outcome for d in diagnoses}
    progress = epoch_progress(kinds.get("epoch", []), outcomes)
    return {
        "name": name,
        "attempts": [_attempt(d, spans.get(d.attempt), gang.get(d.attempt)) for d in sorted(diagnoses, key=lambda d: d.attempt)],
        "trace_groups": trace_groups(kinds.get("trace", [])),
        "errors": errors_by_category(kinds.get("error", [])),
        "progress": progress[:PROGRESS_SHOWN],
        "progress_more": progress[PROGRESS_SHOWN:],
        "charts": [c for c in (
            line_chart(kinds.get("step", []), "loss", "loss"),
            line_chart(kinds.get("step", []), "step_time_s", "step time", unit="s"),
        ) if c],  # fmt: skip
        "events": sorted(kinds.get("event", []), key=lambda e: e.time or "")[:200],
        "signals": sorted(kinds.get("signal", []), key=lambda r: (r.attempt or 0, r.time or "", r.rank if r.rank is not None else -1)),
        "timeline": timeline,
    }


def _attempt_spans(kinds: dict[str, list[Record]]) -> dict[Any, dict[str, Any]]:
    """Per attempt: the first and last time of its records and the ranks (or pods) that logged."""
    spans: dict[Any, dict[str, Any]] = {}
    seconds = times.seconds
    for kind, records in kinds.items():
        of_workers = kind != "event"
        for r in records:
            t = seconds(r.time) if r.time else None
            if t is None:
                continue
            span = spans.get(r.attempt)
            if span is None:  # made once per attempt (setdefault built a dict and a set per record)
                span = spans[r.attempt] = {"first": t, "last": t, "workers": set()}
            elif t < span["first"]:  # first <= last: a time before the first is not after the last
                span["first"] = t
            elif t > span["last"]:
                span["last"] = t
            if of_workers and (r.rank is not None or r.pod):
                span["workers"].add((r.pod, r.rank))
    return spans


def _attempt(d: Any, span: dict[str, Any] | None, gang: dict[str, Any] | None) -> dict[str, Any]:
    duration_s, gpu_h_lost, estimated = None, None, False
    start, end = times.seconds((gang or {}).get("start")), times.seconds((gang or {}).get("end"))
    if start is not None and end is not None:  # admission to the end, from the gang's events
        duration_s = end - start
    elif span is not None:
        duration_s = span["last"] - span["first"]
    if gang is not None and gang.get("accelerator_s_lost"):
        gpu_h_lost = gang["accelerator_s_lost"] / 3600
    elif d.outcome in FAILED and span is not None and span["workers"] and duration_s:
        # no gang events to count accelerators: one per rank that logged, for the attempt's time
        gpu_h_lost, estimated = len(span["workers"]) * duration_s / 3600, True
    evidence = [_evidence(ev) for ev in d.evidence or []]
    return {
        "number": d.attempt,
        "outcome": d.outcome,
        "category": d.category,
        "summary": d.summary,
        "exception_type": d.exception_type,
        "first_failure": d.first_failure or {},
        "confidence": d.confidence,
        "evidence": evidence[:EVIDENCE_SHOWN],
        "evidence_more": evidence[EVIDENCE_SHOWN:],
        "symptoms": d.symptoms,
        "events": d.events,
        "duration_s": duration_s,
        "duration": _duration(duration_s),
        "gpu_h_lost": gpu_h_lost,
        "gpu_h_estimated": estimated,
    }


def _evidence(ev: dict[str, Any]) -> dict[str, Any]:
    """One evidence item: its first EVIDENCE_LINES lines, at most EVIDENCE_CHARS characters, in
    `head`; the rest in `rest` (shown behind <details>), with `rest_said`, how much that is."""
    text = str(ev.get("text") or "")
    lines = text.splitlines(keepends=True)
    head = "".join(lines[:EVIDENCE_LINES])[:EVIDENCE_CHARS]
    rest = text[len(head):]
    rest_lines = rest.count("\n") + (0 if rest.endswith("\n") else 1) if rest else 0
    said = f"{rest_lines} more line{'s' if rest_lines != 1 else ''}" if rest_lines > 1 else f"{len(rest):,} more characters"
    return {**ev, "head": head.rstrip("\n") + (" …" if rest and not head.endswith("\n") else ""),
            "rest": rest.lstrip("\n"), "rest_said": said if rest else ""}


def _duration(seconds: float | None) -> str:
    """1 h 05 m, 12 m 30 s, 45 s."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} m"
    if s >= 60:
        return f"{s // 60} m {s % 60:02d} s"
    return f"{s} s"


def trace_groups(traces: list[Record]) -> list[dict[str, Any]]:
    """Traces grouped by fingerprint: one row for the same traceback printed by 512 ranks."""
    groups: dict[str, dict[str, Any]] = {}
    for t in sorted(traces, key=lambda t: (t.time or "", t.seq)):
        key = t.fingerprint or t.id
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"fingerprint": key, "exception_type": t.exception_type, "message": t.message,
                               "count": 0, "ranks": set(), "pods": set(), "first_seen": t.time, "last_seen": t.time,
                               "example": _example(t.text)}  # fmt: skip
        g["count"] += 1
        if t.rank is not None:
            g["ranks"].add(t.rank)
        if t.pod:
            g["pods"].add(t.pod)
        g["last_seen"] = t.time or g["last_seen"]
    out = []
    for g in groups.values():
        g["ranks"] = _ranks_text(sorted(g["ranks"]))
        g["pods"] = sorted(g["pods"])
        out.append(g)
    return sorted(out, key=lambda g: (g["first_seen"] or "", -g["count"]))


def _example(text: str) -> str:
    lines = (text or "").splitlines()
    if len(lines) > MAX_EXAMPLE_LINES:
        keep = MAX_EXAMPLE_LINES // 2
        lines = lines[:keep] + [f"... {len(lines) - 2 * keep} lines ..."] + lines[-keep:]
    return "\n".join(lines)


def errors_by_category(errors: list[Record]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for e in sorted(errors, key=lambda e: e.time or ""):
        g = groups.get(e.category)
        if g is None:  # made once per category (setdefault built a dict and two sets per error)
            g = groups[e.category] = {"category": e.category, "count": 0, "ranks": set(), "pods": set(),
                                      "first": e.time, "example": e.line or e.message}  # fmt: skip
        g["count"] += 1
        if e.rank is not None:
            g["ranks"].add(e.rank)
        if e.pod:
            g["pods"].add(e.pod)
    out = []
    for g in groups.values():
        g["ranks"] = _ranks_text(sorted(g["ranks"]))
        g["pods"] = sorted(g["pods"])
        out.append(g)
    return sorted(out, key=lambda g: -g["count"])


def epoch_progress(epochs: list[Record], outcomes: Mapping[Any, str] | None = None) -> list[dict[str, Any]]:
    """The last progress of each rank of each attempt. `outcomes` (attempt -> diagnosed outcome)
    says which attempts still run: only those get an ETA; an attempt that ended where it stopped."""
    outcomes = outcomes or {}
    latest: dict[tuple, Record] = {}
    for e in epochs:
        key = (e.attempt, e.rank, e.pod)
        if key not in latest or (e.time or "") >= (latest[key].time or ""):
            latest[key] = e
    rows = []
    for (attempt, rank, pod), e in sorted(latest.items(), key=lambda kv: (kv[0][0], kv[0][1] if kv[0][1] is not None else -1, kv[0][2] or "")):
        progress = e.progress if e.progress is not None else None
        outcome = outcomes.get(attempt, "running")
        running = outcome == "running"
        rows.append({"attempt": attempt, "rank": rank, "pod": pod, "epoch": e.epoch, "total_epochs": e.total_epochs,
                     "step": e.step, "total_steps": e.total_steps, "outcome": outcome, "running": running,
                     "percent": round(100 * max(0.0, min(1.0, progress)), 1) if progress is not None else None,
                     "eta_s": e.eta_s if running else None,
                     "eta": _duration(e.eta_s) if running and e.eta_s is not None else "", "time": e.time})  # fmt: skip
    return rows


def line_chart(steps: list[Record], field: str, label: str, unit: str = "") -> dict[str, Any] | None:
    """Polylines (one per rank, at most MAX_SERIES) of `field` against the optimizer step, with
    round ticks on both axes (1, 2 or 5 times a power of ten) and labels that do not overlap.
    Records without a step number are drawn against seconds since the first record."""
    series: dict[Any, list[tuple[float, float]]] = defaultdict(list)
    by_step = all(s.step is not None for s in steps if getattr(s, field, None) is not None)
    # a time axis reads each step's time once, for its origin and its x (three times before); by step, never
    seconds = times.seconds
    at = [None] * len(steps) if by_step else [seconds(s.time) if s.time else None for s in steps]
    t_first = 0.0 if by_step else min((t for t in at if t is not None), default=0.0)
    for s, t in zip(steps, at):
        value = getattr(s, field, None)
        if by_step:
            x = s.step
        else:
            x = t - t_first if t is not None else None
        if value is None or x is None or not math.isfinite(value):
            continue
        series[(s.attempt, s.rank if s.rank is not None else s.pod)].append((float(x), float(value)))
    if not series:
        return None
    keys = sorted(series, key=lambda k: (-len(series[k]), str(k)))[:MAX_SERIES]
    xs = [x for k in keys for x, _ in series[k]]
    ys = [y for k in keys for _, y in series[k]]
    x_ticks = nice_ticks(min(xs), max(xs), 6, integer=by_step)
    y_ticks = nice_ticks(min(ys), max(ys), 5)
    x0, x1 = x_ticks[0], x_ticks[-1]
    y0, y1 = y_ticks[0], y_ticks[-1]
    inner_w, inner_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B

    def sx(x: float) -> float:
        return round(PAD_L + (x - x0) / (x1 - x0) * inner_w, 1)

    def sy(y: float) -> float:
        return round(CHART_H - PAD_B - (y - y0) / (y1 - y0) * inner_h, 1)

    lines = []
    for i, k in enumerate(keys):
        pts = sorted(series[k])
        attempt, who = k
        lines.append({
            "label": f"attempt {attempt} · " + (f"rank {who}" if isinstance(who, int) else str(who or "?")),
            "color": SERIES_COLORS[i],
            "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in pts),
        })
    x_step, y_step = x_ticks[1] - x_ticks[0], y_ticks[1] - y_ticks[0]
    return {"title": label + (f" ({unit})" if unit else ""), "width": CHART_W, "height": CHART_H, "lines": lines,
            "left": PAD_L, "top": PAD_T, "right": CHART_W - PAD_R, "bottom": CHART_H - PAD_B,
            "x_label": "step" if by_step else "seconds since the first step",
            "x_ticks": [{"at": sx(v), "text": format_number(v, x_step)} for v in x_ticks],
            "y_ticks": [{"at": sy(v), "text": format_number(v, y_step)} for v in y_ticks],
            "x_min": format_number(min(xs)), "x_max": format_number(max(xs)),
            "y_min": format_number(min(ys)), "y_max": format_number(max(ys))}  # fmt: skip


TINY_SPAN = 1e-290  # under it, a tick step's power of ten is not a normal float


def nice_ticks(lo: float, hi: float, count: int = 5, integer: bool = False) -> list[float]:
    """Round tick values that cover [lo, hi]: about `count` of them, a step of 1, 2 or 5 times a
    power of ten (whole numbers when `integer`, e.g. steps)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(count - 1, 1)
    if not raw >= TINY_SPAN:
        # a span near the floats' end (a loss of 1e-310): a power of ten there underflows to 0
        # and ticks rounded to 12 decimals never pass `hi`; the ends themselves are the ticks
        return [lo, hi] if hi > lo else [lo, lo + 1.0]
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    if integer:
        step = max(1.0, round(step))
    digits = max(12, 6 - math.floor(math.log10(step)))  # 12 decimals, more for steps under 1e-6
    first = math.floor(lo / step + 1e-9) * step
    ticks = [round(first, digits)]
    while (ticks[-1] < hi - step * 1e-9 or len(ticks) < 2) and len(ticks) <= 4 * count + 4:
        ticks.append(round(first + len(ticks) * step, digits))
    return ticks


def format_number(v: float, step: float | None = None) -> str:
    """A number as a person reads it on an axis: 1.2k, 3.5M, 0.25, 1e-4 (never 1e+08G); with
    the axis' `step`, no more decimals than it needs."""
    if v == 0:
        return "0"
    a = abs(v)
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return _trim(f"{v / scale:.{_decimals((step or a) / scale)}f}") + suffix
    if a < 1e-3:
        return f"{v:.0e}".replace("e-0", "e-")
    return _trim(f"{v:.{_decimals(step or a)}f}")


def _decimals(step: float) -> int:
    """Decimals that tell ticks `step` apart (at most 4)."""
    if step <= 0 or not math.isfinite(step):
        return 2
    for decimals in range(5):
        if abs(round(step, decimals) - step) <= step * 1e-6:
            return decimals
    return 4


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _ranks_text(ranks: list[int]) -> str:
    if not ranks:
        return ""
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(runs)
