"""Pipeline errors by category over time, and the latest ones verbatim."""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, hits, interval_ms, time_bounds, total

NAME = "errors"
TITLE = "Pipeline errors"
TEMPLATE = "errors.html.j2"
LATEST = 25
WIDE_CHART = 1240  # the histogram spans the panel (scaled down by the page on a narrower screen)
SHORT_LINES, SHORT_CHARS = 3, 240


def query(search: Search, filters: Filters) -> dict[str, Any]:
    bounds = time_bounds(search, "error", filters)
    width = interval_ms(bounds)
    r = search("error", {
        "size": LATEST, "track_total_hits": True, "query": filters.query(),
        "sort": [{"time": {"order": "desc", "unmapped_type": "date_nanos"}}],
        "_source": ["time", "job", "attempt", "pod", "rank", "category", "message", "line"],
        "aggs": {
            "categories": {"terms": {"field": "category", "size": 50}},
            "over_time": {"date_histogram": {"field": "time", "fixed_interval": f"{width}ms", "min_doc_count": 1},
                          "aggs": {"categories": {"terms": {"field": "category", "size": 20}}}},
        },
    })
    return {
        "total": total(r),
        "interval_ms": width,
        "by_category": {b["key"]: b["doc_count"] for b in buckets(r, "categories")},
        "over_time": [{"t": b["key"], "counts": {c["key"]: c["doc_count"] for c in buckets(b, "categories")}}
                      for b in buckets(r, "over_time")],
        "latest": hits(r),
    }


def view(data: dict[str, Any]) -> dict[str, Any]:
    """The histogram the page's width, and each latest line cut to a few lines (the whole below it)."""
    latest = [{**e, "short": short_line(e.get("line") or e.get("message") or "")} for e in data["latest"]]
    return {**data, "latest": latest, "charts": [charts.stacked_bars(
        "Errors per category over time", [(b["t"], b["counts"]) for b in data["over_time"]], data["interval_ms"],
        width=WIDE_CHART)]}


def short_line(text: str) -> dict[str, Any]:
    """The first SHORT_LINES lines of a logged line (a ChildFailedError box, a list of missing keys),
    each at most SHORT_CHARS characters, and whether anything was cut."""
    lines = text.splitlines() or [""]
    head = [line if len(line) <= SHORT_CHARS else line[:SHORT_CHARS] + "…" for line in lines[:SHORT_LINES]]
    return {"text": "\n".join(head), "cut": len(lines) > SHORT_LINES or any(len(l) > SHORT_CHARS for l in lines[:SHORT_LINES]),
            "lines": len(lines)}
