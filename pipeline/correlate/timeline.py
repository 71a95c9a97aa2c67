"""The attempts, gang events and failures of one job on one time axis, for the report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.attempts import build_attempts
from gangscope.pipeline.correlate.gang_view import accelerator_time_lost
from gangscope.pipeline.correlate.linking import details_of, get_field
from gangscope.pipeline.correlate.model import Attempt
from gangscope.pipeline.correlate.signals import classify
from gangscope.pipeline.correlate.text import shorten


_MARK_KINDS = {
    "admitted": "admitted", "evicted": "evicted", "requeued": "requeued", "requeue_wait": "requeue",
    "finished": "finished", "pending": "pending", "deactivation_target": "deactivated", "pods_ready": "ready",
}


def timeline(job: str, attempts: Any = None, events: Iterable[Any] = (), failures: Iterable[Any] = ()) -> dict:
    """Attempts, gang events and log-derived failures of one job on one time axis (x in 0..1).

    `events` are event records (any job; this job's are used), `failures` are error /
    trace records or diagnosis dicts with a time. `attempts` are the job's attempts from
    `build_attempts`; when omitted, or when event records are passed in their place
    (`timeline(job, events)`), they are built from the events. templates/timeline.html.j2
    renders the result.
    """
    if attempts is not None and not isinstance(attempts, Mapping):
        items = list(attempts)
        if items and not all(isinstance(a, Attempt) for a in items):
            events, attempts = items, None
        else:
            attempts = items
    events = list(events)
    if attempts is None:
        attempts = build_attempts(events).get(job, [])
    elif isinstance(attempts, Mapping):
        attempts = attempts.get(job, [])
    marks = []
    for r in events:
        if get_field(r, "job") != job:
            continue
        s = classify(r)
        if s is None or s.kind not in _MARK_KINDS:
            continue
        label = get_field(r, "reason") or s.kind
        if get_field(r, "type") == "Condition":
            c = (details_of(r).get("condition") or {})
            label = f"{c.get('type')}={c.get('status')} {c.get('reason') or ''}".strip()
        marks.append({"t": s.t, "time": s.time, "kind": _MARK_KINDS[s.kind], "label": label,
                      "message": shorten(get_field(r, "message") or "", 200), "event_id": s.id})
    fails = []
    for f in failures:
        t = times.seconds(get_field(f, "time") or (get_field(f, "first_failure") or {}).get("time"))
        if t is None:
            continue
        text = get_field(f, "summary") or get_field(f, "exception_type") or get_field(f, "message") or get_field(f, "category") or ""
        if get_field(f, "exception_type") and get_field(f, "message"):
            text = f"{get_field(f, 'exception_type')}: {get_field(f, 'message')}"
        fails.append({"t": t, "time": times.from_seconds(t), "pod": get_field(f, "pod") or (get_field(f, "first_failure") or {}).get("pod"),
                      "category": get_field(f, "category"), "label": shorten(str(text), 200), "id": get_field(f, "id"),
                      "attempt": get_field(f, "attempt"), "from": "logs"})
    for a in attempts:
        for b in (a.details.get("gang") or {}).get("not_ready", []):
            when = b.get("since") or b.get("time")
            t = times.seconds(when)
            if t is not None:
                fails.append({"t": t, "time": when, "pod": b.get("pod"), "category": b["kind"],
                              "label": shorten(b.get("message") or b["kind"], 200), "id": b.get("event_id"),
                              "attempt": a.number, "from": "gang"})
    moments = [m["t"] for m in marks] + [f["t"] for f in fails]
    for a in attempts:
        for ts in (a.start, a.end, (a.details.get("queued") or {}).get("since")):
            if times.seconds(ts) is not None:
                moments.append(times.seconds(ts))
    if not moments:
        return {"job": job, "start": None, "end": None, "span_s": 0, "attempts": [], "marks": [], "failures": [],
                "ticks": [], "accelerator_s_lost": accelerator_time_lost(attempts)}
    t0, t1 = min(moments), max(moments)
    span = max(t1 - t0, 1.0)

    def x(t: float) -> float:
        return round((t - t0) / span, 4)

    bars = []
    for a in attempts:
        s, e = times.seconds(a.start), times.seconds(a.end)
        q = a.details.get("queued") or {}
        qs = times.seconds(q.get("since"))
        bars.append({
            "number": a.number, "start": a.start, "end": a.end, "end_reason": a.end_reason,
            "x0": x(s) if s is not None else None, "x1": x(e) if e is not None else 1.0,
            "queued_x0": x(qs) if qs is not None else None,
            "pending": bool(a.details.get("pending")),
            "accelerator_s_lost": (a.details.get("accelerators") or {}).get("accelerator_s_lost", 0.0),
            "pods_ready": len((a.details.get("gang") or {}).get("ready") or []),
            "pods_expected": (a.details.get("gang") or {}).get("pods_expected"),
            "label": a.end_reason or ("waiting" if a.details.get("pending") else "running"),
        })
    for m in marks:
        m["x"] = x(m.pop("t"))
    for f in fails:
        f["x"] = x(f.pop("t"))
    marks.sort(key=lambda m: (m["x"], m["kind"]))
    fails.sort(key=lambda f: (f["x"], f.get("pod") or ""))
    ticks = [{"x": round(i / 4, 4), "time": times.from_seconds(t0 + span * i / 4)} for i in range(5)]
    return {"job": job, "start": times.from_seconds(t0), "end": times.from_seconds(t1), "span_s": round(span, 3), "attempts": bars,
            "marks": marks, "failures": fails, "ticks": ticks, "accelerator_s_lost": accelerator_time_lost(attempts)}
