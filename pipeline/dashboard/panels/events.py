"""Gang events timeline: admissions, evictions (with their reason), requeues and backoff, pod trouble.

Lanes come from the event reason (Kueue's reasons, see FORMATS.md §2.4); a new reason is one new
row in LANES, not a new branch.
"""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.query import Filters, Search, hits, iso_ms, total

NAME = "events"
TITLE = "Gang events"
TEMPLATE = "events.html.j2"
LIMIT = 500  # the newest events read
TABLE_ROWS = 100  # of them listed, newest first; the timeline draws all

# (lane, colour, reason prefixes), first match wins.
LANES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("eviction", "#dc2626", ("Evicted", "Preempted", "Stopped", "Deactivat", "MaximumExecutionTimeExceeded",
                             "AdmissionCheckRejected", "TaintManagerEviction", "NodeNotReady")),
    ("requeue", "#d97706", ("Requeue", "BackoffFinished", "Reactivated", "Pending", "WaitingForQuota",
                            "SecondPassFailed")),
    ("admission", "#16a34a", ("QuotaReserved", "Admitted", "Started", "CreatedWorkload", "Resumed")),
    ("finished", "#2563eb", ("Finished", "Completed", "Succeeded", "Deleted", "SuccessfulDelete")),
    ("pods", "#7c3aed", ("FailedScheduling", "BackOff", "Failed", "ImagePull", "ErrImagePull", "OOMKill",
                         "Killing", "Unhealthy", "FailedMount", "Scheduled", "Pulled", "Created", "Pulling")),
)
OTHER = ("other", "#4b5563")


def lane_of(reason: str | None) -> str:
    for lane, _, prefixes in LANES:
        if reason and reason.startswith(prefixes):
            return lane
    return OTHER[0]


def eviction_cause(reason: str | None) -> str | None:
    """`EvictedDueToPodsReadyTimeout` -> `PodsReadyTimeout` (Kueue composes reason + "DueTo" + cause)."""
    if reason and "DueTo" in reason:
        return reason.split("DueTo", 1)[1]
    return None


def query(search: Search, filters: Filters) -> dict[str, Any]:
    r = search("event", {
        "size": LIMIT, "track_total_hits": True, "query": filters.query(),
        # the newest LIMIT events (a cluster's history is long), then in time order
        "sort": [{"time": {"order": "desc", "unmapped_type": "date_nanos"}}, {"id": {"order": "desc"}}],
        "_source": ["time", "job", "attempt", "reason", "type", "object_kind", "object_name", "message", "count"],
    })
    events = []
    for e in reversed(hits(r)):
        events.append({**e, "lane": lane_of(e.get("reason")), "cause": eviction_cause(e.get("reason"))})
    lanes = {lane: 0 for lane, _, _ in LANES}
    lanes[OTHER[0]] = 0
    for e in events:
        lanes[e["lane"]] += 1
    return {"total": total(r), "shown": len(events), "lanes": lanes, "events": events}


def view(data: dict[str, Any]) -> dict[str, Any]:
    used = [lane for lane, n in data["lanes"].items() if n]
    colors = {lane: c for lane, c, _ in LANES} | {OTHER[0]: OTHER[1]}
    marks = []
    for e in data["events"]:
        t = iso_ms(e.get("time"))
        if t is not None:
            tip = f"{e.get('time')} {e.get('reason')} {e.get('object_kind') or ''}/{e.get('object_name') or ''}: {e.get('message') or ''}"
            marks.append((t, e["lane"], tip))
    return {**data, "charts": [charts.timeline("Timeline", marks, used, colors)],
            "colors": colors, "bands": bands(data["events"][::-1][:TABLE_ROWS])}


def bands(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events newest first, in bands of one job attempt each (a new band where the job or the
    attempt changes), as the table lists them."""
    out: list[dict[str, Any]] = []
    for e in events:
        key = (e.get("job"), e.get("attempt"))
        if not out or out[-1]["key"] != key:
            out.append({"key": key, "job": key[0], "attempt": key[1], "events": []})
        out[-1]["events"].append(e)
    return out
