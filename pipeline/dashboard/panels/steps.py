"""Step metrics over time: loss, throughput and step time by job, and the spread across ranks.

Ranks are compared within one job (the filtered one, else the job with the most step records).
A straggler is a rank whose mean step time is more than STRAGGLER_RATIO times the median rank's.
"""

from __future__ import annotations

import statistics
from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, interval_ms, time_bounds, total, value

NAME = "steps"
TITLE = "Step metrics"
TEMPLATE = "steps.html.j2"

STRAGGLER_RATIO = 1.25
MAX_RANKS = 2048
_METRICS = ("loss", "throughput", "step_time_s")


def _metric_aggs() -> dict[str, Any]:
    return {m: {"avg": {"field": m}} for m in _METRICS}


def _by_rank_time(order: str) -> dict[str, Any]:
    """The one rank with the highest (desc) or lowest (asc) mean step time in a bucket."""
    return {"terms": {"field": "rank", "size": 1, "order": {"st": order}},
            "aggs": {"st": {"avg": {"field": "step_time_s"}}}}


def query(search: Search, filters: Filters) -> dict[str, Any]:
    bounds = time_bounds(search, "step", filters)
    width = interval_ms(bounds)
    histogram = {"date_histogram": {"field": "time", "fixed_interval": f"{width}ms", "min_doc_count": 1}}
    r = search("step", {
        "size": 0, "track_total_hits": True, "query": filters.query(),
        "aggs": {"by_job": {
            "terms": {"field": "job", "size": 12},
            "aggs": {"over_time": {**histogram, "aggs": _metric_aggs()},
                     "last_step": {"max": {"field": "step"}},
                     "latest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}],
                                             "_source": ["loss", "step", "time", "throughput_unit"]}}},
        }},
    })
    jobs = []
    for b in buckets(r, "by_job"):
        latest = (b["latest"]["hits"]["hits"] or [{"_source": {}}])[0]["_source"]
        jobs.append({
            "job": b["key"], "records": b["doc_count"], "last_step": value(b, "last_step"),
            "latest_loss": latest.get("loss"), "throughput_unit": latest.get("throughput_unit"),
            "series": [{"t": p["key"], **{m: value(p, m) for m in _METRICS}} for p in buckets(b, "over_time")],
        })
    focus = filters.job or (jobs[0]["job"] if jobs else None)
    ranks, spread = (_ranks(search, filters, focus, histogram) if focus else ([], []))
    times = [x["step_time_s"] for x in ranks if x["step_time_s"] is not None]
    median = statistics.median(times) if times else None
    for x in ranks:
        x["straggler"] = bool(median and x["step_time_s"] is not None and x["step_time_s"] > STRAGGLER_RATIO * median)
    return {"records": total(r), "interval_ms": width, "jobs": jobs, "rank_job": focus, "ranks": ranks,
            "median_step_time_s": median, "straggler_ratio": STRAGGLER_RATIO,
            "stragglers": [x["rank"] for x in ranks if x["straggler"]], "spread": spread}


def _ranks(search: Search, filters: Filters, job: str, histogram: dict[str, Any]) -> tuple[list, list]:
    """Per-rank means of one job, and per time bucket the gap between its slowest and fastest rank."""
    r = search("step", {
        "size": 0, "query": filters.query({"term": {"job": job}}),
        "aggs": {
            "by_rank": {"terms": {"field": "rank", "size": MAX_RANKS, "order": {"_key": "asc"}},
                        "aggs": {**_metric_aggs(), "last_step": {"max": {"field": "step"}}}},
            "spread": {**histogram, "aggs": {"slowest": _by_rank_time("desc"), "fastest": _by_rank_time("asc"),
                                             "ranks": {"cardinality": {"field": "rank"}}}},
        },
    })
    ranks = [{"rank": b["key"], "records": b["doc_count"], "last_step": value(b, "last_step"),
              **{m: value(b, m) for m in _METRICS}} for b in buckets(r, "by_rank")]
    spread = []
    for p in buckets(r, "spread"):
        slow, fast = buckets(p, "slowest"), buckets(p, "fastest")
        if (value(p, "ranks") or 0) >= 2 and slow and fast and value(slow[0], "st") is not None:
            spread.append({"t": p["key"], "spread_s": value(slow[0], "st") - value(fast[0], "st"),
                           "slowest_rank": slow[0]["key"]})
    return ranks, spread


def view(data: dict[str, Any]) -> dict[str, Any]:
    """The query's numbers plus the charts drawn from them."""
    def series(metric: str) -> dict[str, list[tuple[float, float]]]:
        return {j["job"]: [(p["t"], p[metric]) for p in j["series"] if p[metric] is not None] for j in data["jobs"]}

    unit = next((j["throughput_unit"] for j in data["jobs"] if j.get("throughput_unit")), "")
    job = data["rank_job"] or ""
    return {
        **data,
        "charts": [
            charts.line_chart("Loss", series("loss")),
            charts.line_chart(f"Throughput{' (' + unit + ')' if unit else ''}", series("throughput")),
            charts.line_chart("Step time (s)", series("step_time_s"), " s"),
            charts.line_chart(f"Rank spread of step time, {job} (slowest - fastest rank, s)",
                              {job: [(p["t"], p["spread_s"]) for p in data["spread"]]}, " s"),
            charts.bar_chart(f"Mean step time by rank, {job} (s); red: straggler",
                             [(str(x["rank"]), x["step_time_s"], x["straggler"]) for x in data["ranks"]], " s"),
        ],
    }
