"""report.html: one self-contained page per run (inline CSS and SVG, no script, no CDN).

`render_report(records, diagnoses, timelines=...)` builds a plain view model per job here
(trace groups, errors by category, epoch progress, chart geometry) and renders
templates/report.html.j2 with autoescape on: every string that came from a log is
escaped by Jinja. Jobs with gang events get templates/timeline.html.j2 (`job.timeline`): the
timelines come as plain data from the caller (pipeline/diagnose/back_half.py draws them: attempts,
events and each diagnosed first failure from the logs). The report depends on records only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Mapping

import jinja2

import gangscope.templates

from gangscope.parsers import times
from gangscope.parsers.records import Record, from_dict, job_key
from gangscope.pipeline.isolation import StageFailures, unit_of_work

TEMPLATES = Path(gangscope.templates.__file__).parent

CHART_W, CHART_H, PAD = 640, 180, 36
SERIES_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
MAX_SERIES = len(SERIES_COLORS)
MAX_EXAMPLE_LINES = 60


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # everything from a log is escaped
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_report(records: Iterable[Record | dict], diagnoses: Iterable[Record | dict],
                  failures: StageFailures | None = None, timelines: Mapping[str, dict] | None = None) -> str:
    """The whole report as one HTML string.

    timelines: job -> its gang timeline (plain data, as back_half.Findings.timelines has it);
    a job without one has no timeline drawn.

    One job's section is one unit of work (pipeline/isolation.py): a section that cannot be
    built or rendered shows the job with the error instead, the rest of the report is kept,
    and the failure is counted in `failures` (stage "report")."""
    recs = [from_dict(r) if isinstance(r, dict) else r for r in records]
    diags = [from_dict(d) if isinstance(d, dict) else d for d in diagnoses]
    failures = failures if failures is not None else StageFailures()
    jobs = build_jobs(recs, diags, failures, timelines)
    template = _env().get_template("report.html.j2")
    try:
        return template.render(jobs=jobs, title="gangscope report")
    except Exception:
        # Find the sections that do not render, one at a time, and show their jobs with the error.
        for i, job in enumerate(jobs):
            with unit_of_work(failures, "report", position=job["name"], section="render", job=job["name"]) as unit:
                template.render(jobs=[job], title="gangscope report")
            if unit.failed:
                jobs[i] = failed_section(job["name"], unit.failed)
        return template.render(jobs=jobs, title="gangscope report")


def failed_section(name: str, exc: BaseException) -> dict[str, Any]:
    """A job whose section could not be made: its name and the error."""
    return {"name": name, "error": f"{type(exc).__name__} while building its section", "attempts": [],
            "trace_groups": [], "errors": [], "progress": [], "charts": [], "events": [], "timeline": None}


def build_jobs(records: list[Record], diagnoses: list[Record], failures: StageFailures | None = None,
               timelines: Mapping[str, dict] | None = None) -> list[dict[str, Any]]:
    """The view model of each job's section, jobs in trouble first. With `failures`, a section
    that raises is counted there and shown as `failed_section`; without, it raises."""
    by_job: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.kind != "diagnosis":
            by_job[job_key(r)][r.kind].append(r)
    diag_by_job: dict[str, list[Record]] = defaultdict(list)
    for d in diagnoses:
        diag_by_job[d.job or job_key(d)].append(d)
    # jobs whose latest attempt failed or was evicted first: they are what the reader came for
    def trouble_first(name: str) -> tuple:
        latest = max(diag_by_job.get(name, []), key=lambda d: d.attempt, default=None)
        return (getattr(latest, "outcome", None) not in ("failed", "evicted"), name)

    names = sorted(set(by_job) | set(diag_by_job), key=trouble_first)
    jobs = []
    for name in names:
        with unit_of_work(failures, "report", position=name, section="job", job=name) as unit:
            jobs.append(_job_section(name, by_job.get(name, {}), diag_by_job.get(name, []), (timelines or {}).get(name)))
        if unit.failed:
            jobs.append(failed_section(name, unit.failed))
    return jobs


def _job_section(name: str, kinds: dict[str, list[Record]], diagnoses: list[Record], timeline: dict | None) -> dict[str, Any]:
    return {
        "name": name,
        "attempts": [_attempt(d) for d in sorted(diagnoses, key=lambda d: d.attempt)],
        "trace_groups": trace_groups(kinds.get("trace", [])),
        "errors": errors_by_category(kinds.get("error", [])),
        "progress": epoch_progress(kinds.get("epoch", [])),
        "charts": [c for c in (
            line_chart(kinds.get("step", []), "loss", "loss"),
            line_chart(kinds.get("step", []), "step_time_s", "step time (s)"),
        ) if c],  # fmt: skip
        "events": sorted(kinds.get("event", []), key=lambda e: e.time or "")[:200],
        "timeline": timeline,
    }


def _attempt(d: Any) -> dict[str, Any]:
    return {
        "number": d.attempt,
        "outcome": d.outcome,
        "category": d.category,
        "summary": d.summary,
        "exception_type": d.exception_type,
        "first_failure": d.first_failure or {},
        "confidence": d.confidence,
        "evidence": d.evidence,
        "symptoms": d.symptoms,
        "events": d.events,
    }


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
        g = groups.setdefault(e.category, {"category": e.category, "count": 0, "ranks": set(), "pods": set(),
                                           "first": e.time, "example": e.line or e.message})  # fmt: skip
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


def epoch_progress(epochs: list[Record]) -> list[dict[str, Any]]:
    latest: dict[tuple, Record] = {}
    for e in epochs:
        key = (e.attempt, e.rank, e.pod)
        if key not in latest or (e.time or "") >= (latest[key].time or ""):
            latest[key] = e
    rows = []
    for (attempt, rank, pod), e in sorted(latest.items(), key=lambda kv: (kv[0][0], kv[0][1] if kv[0][1] is not None else -1, kv[0][2] or "")):
        progress = e.progress if e.progress is not None else None
        rows.append({"attempt": attempt, "rank": rank, "pod": pod, "epoch": e.epoch, "total_epochs": e.total_epochs,
                     "step": e.step, "total_steps": e.total_steps,
                     "percent": round(100 * max(0.0, min(1.0, progress)), 1) if progress is not None else None,
                     "eta_s": e.eta_s, "time": e.time})  # fmt: skip
    return rows


def line_chart(steps: list[Record], field: str, label: str) -> dict[str, Any] | None:
    """Polylines (one per rank, at most MAX_SERIES) of `field` against the step number."""
    series: dict[Any, list[tuple[float, float]]] = defaultdict(list)
    for s in steps:
        value = getattr(s, field, None)
        x = s.step if s.step is not None else times.seconds(s.time)
        if value is None or x is None or not math.isfinite(value):
            continue
        series[(s.attempt, s.rank if s.rank is not None else s.pod)].append((float(x), float(value)))
    if not series:
        return None
    keys = sorted(series, key=lambda k: (-len(series[k]), str(k)))[:MAX_SERIES]
    xs = [x for k in keys for x, _ in series[k]]
    ys = [y for k in keys for _, y in series[k]]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + (abs(y0) or 1) * 0.1
    inner_w, inner_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD

    def sx(x: float) -> float:
        return round(PAD + (x - x0) / (x1 - x0) * inner_w, 1)

    def sy(y: float) -> float:
        return round(CHART_H - PAD - (y - y0) / (y1 - y0) * inner_h, 1)

    lines = []
    for i, k in enumerate(keys):
        pts = sorted(series[k])
        attempt, who = k
        lines.append({
            "label": f"attempt {attempt} · " + (f"rank {who}" if isinstance(who, int) else str(who or "?")),
            "color": SERIES_COLORS[i],
            "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in pts),
        })
    return {"title": label, "width": CHART_W, "height": CHART_H, "pad": PAD, "lines": lines,
            "x_min": _num(x0), "x_max": _num(x1), "y_min": _num(y0), "y_max": _num(y1),
            "x_label": "step", "bottom": CHART_H - PAD, "right": CHART_W - PAD}  # fmt: skip


def _num(v: float) -> str:
    return f"{v:.4g}"


def _ranks_text(ranks: list[int]) -> str:
    if not ranks:
        return ""
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(runs)
