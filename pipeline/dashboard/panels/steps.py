"""Step metrics by optimizer step: loss, throughput and step time by job, and the spread across ranks.

Every chart is on a step axis (buckets of steps, STEP_BUCKETS of them up to the largest step),
so jobs logged days apart are drawn side by side instead of in one time bucket each. Ranks are
compared within one job: the filtered one, else the job with the most ranks reporting a step
time (a job whose steps carry no rank or step time has nothing to compare). A straggler is a
rank whose mean step time is more than STRAGGLER_RATIO times the median rank's.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, total, value

NAME = "steps"
TITLE = "Step metrics"
TEMPLATE = "steps.html.j2"

STRAGGLER_RATIO = 1.25
MAX_RANKS = 2048
STEP_BUCKETS = 100
_METRICS = ("loss", "throughput", "step_time_s")


def _metric_aggs() -> dict[str, Any]:
    return {m: {"avg": {"field": m}} for m in _METRICS}


def _by_rank_time(order: str) -> dict[str, Any]:
    """The one rank with the highest (desc) or lowest (asc) mean step time in a bucket."""
    return {"terms": {"field": "rank", "size": 1, "order": {"st": order}},
            "aggs": {"st": {"avg": {"field": "step_time_s"}}}}


def query(search: Search, filters: Filters) -> dict[str, Any]:
    top = search("step", {"size": 0, "query": filters.query(), "aggs": {
        "by_job": {"terms": {"field": "job", "size": 12}, "aggs": {"max_step": {"max": {"field": "step"}}}},
        # the job with the most ranks that report a step time: the one whose ranks can be compared
        "comparable": {"filter": {"bool": {"filter": [{"exists": {"field": "rank"}}, {"exists": {"field": "step_time_s"}}]}},
                       "aggs": {"jobs": {"terms": {"field": "job", "size": 1, "order": [{"ranks": "desc"}, {"_count": "desc"}]},
                                         "aggs": {"ranks": {"cardinality": {"field": "rank"}}}}}},
    }})  # fmt: skip
    # each job its own buckets of steps: a job of 40 steps beside one of 30,000 is not one bucket
    widths = {b["key"]: _step_interval(value(b, "max_step")) for b in buckets(top, "by_job")}
    r = search("step", {
        "size": 0, "track_total_hits": True, "query": filters.query(),
        "aggs": {"by_job": {
            "terms": {"field": "job", "size": 12},
            "aggs": {"with_step": {"filter": {"exists": {"field": "step"}}, "aggs": {"over_steps": {
                         "histogram": {"script": {"source": _BUCKET_OF_STEP, "params": {"w": widths}},
                                       "interval": 1, "min_doc_count": 1},
                         "aggs": _metric_aggs()}}},
                     "last_step": {"max": {"field": "step"}},
                     "latest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}],
                                             "_source": ["loss", "step", "time", "throughput_unit"]}}},
        }},
    })  # fmt: skip
    jobs = []
    for b in buckets(r, "by_job"):
        latest = (b["latest"]["hits"]["hits"] or [{"_source": {}}])[0]["_source"]
        width = widths.get(b["key"], 1)
        jobs.append({
            "job": b["key"], "records": b["doc_count"], "last_step": value(b, "last_step"),
            "latest_loss": latest.get("loss"), "throughput_unit": latest.get("throughput_unit"), "step_interval": width,
            "series": [{"step": p["key"] * width, **{m: value(p, m) for m in _METRICS}}
                       for p in buckets(b, "with_step", "over_steps")],
        })
    comparable = buckets(top, "comparable", "jobs")
    focus = filters.job or (comparable[0]["key"] if comparable else (jobs[0]["job"] if jobs else None))
    histogram = {"histogram": {"field": "step", "interval": widths.get(focus, 1), "min_doc_count": 1}}
    ranks, spread = (_ranks(search, filters, focus, histogram) if focus else ([], []))
    times = [x["step_time_s"] for x in ranks if x["step_time_s"] is not None]
    median = statistics.median(times) if times else None
    for x in ranks:
        x["straggler"] = bool(median and x["step_time_s"] is not None and x["step_time_s"] > STRAGGLER_RATIO * median)
    return {"records": total(r), "jobs": jobs, "rank_job": focus, "ranks": ranks,
            "median_step_time_s": median, "straggler_ratio": STRAGGLER_RATIO,
            "stragglers": [x["rank"] for x in ranks if x["straggler"]], "spread": spread}


# A step's bucket within its own job: floor(step / the job's steps per bucket).
_BUCKET_OF_STEP = "Math.floor(doc['step'].value / params.w.getOrDefault(doc['job'].value, 1))"


def _step_interval(max_step: float | None) -> int:
    """Steps per bucket: about STEP_BUCKETS buckets up to the largest step, at least 1."""
    return max(1, math.ceil((max_step or 0) / STEP_BUCKETS))


def _ranks(search: Search, filters: Filters, job: str, histogram: dict[str, Any]) -> tuple[list, list]:
    """Per-rank means of one job, and per bucket of steps the gap between its slowest and fastest rank."""
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
            spread.append({"step": p["key"], "spread_s": value(slow[0], "st") - value(fast[0], "st"),
                           "slowest_rank": slow[0]["key"]})
    return ranks, spread


def view(data: dict[str, Any]) -> dict[str, Any]:
    """The query's numbers plus the charts drawn from them."""
    def series(metric: str) -> dict[str, list[tuple[float, float]]]:
        return {j["job"]: [(p["step"], p[metric]) for p in j["series"] if p[metric] is not None] for j in data["jobs"]}

    unit = next((j["throughput_unit"] for j in data["jobs"] if j.get("throughput_unit")), "")
    job = data["rank_job"] or ""
    return {
        **data,
        "charts": [
            charts.line_chart("Loss by step", series("loss"), x="step"),
            charts.line_chart(f"Throughput{' (' + unit + ')' if unit else ''} by step", series("throughput"), x="step"),
            charts.line_chart("Step time (s) by step", series("step_time_s"), " s", x="step"),
            charts.line_chart(f"Rank spread of step time, {job} (slowest - fastest rank, s)",
                              {job: [(p["step"], p["spread_s"]) for p in data["spread"]]}, " s", x="step"),
            charts.bar_chart(f"Mean step time by rank, {job} (s); red: straggler",
                             [(str(x["rank"]), x["step_time_s"], x["straggler"]) for x in data["ranks"]], " s"),
        ],
    }
