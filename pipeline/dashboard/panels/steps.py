"""Step metrics by optimizer step: loss, throughput and step time by job.

Every chart is on a step axis (buckets of steps, STEP_BUCKETS of them up to the largest step),
so jobs logged days apart are drawn side by side instead of in one time bucket each. A job's
loss, throughput and step-time lines are its lowest rank's (rank 0's, as its log shows them; all
its records when they carry no rank): the query then reads one rank's steps, not every rank's
(on a million records, 32 ranks a job, a thirty-second of them). Which rank is slow (the ranks
of one job compared, their spread, the pipeline's straggler and stall signals) is another
question and another panel, with its own query: ranks.py.
"""

from __future__ import annotations

import math
from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.panels.step_jobs import METRICS, metric_aggs, top_jobs_search, with_extremes
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, total, value

NAME = "steps"
TITLE = "Step metrics"
TEMPLATE = "steps.html.j2"

STEP_BUCKETS = 100


def query(search: Search, filters: Filters) -> dict[str, Any]:
    top = search("step", top_jobs_search(filters))
    found = with_extremes(search, filters, buckets(top, "by_job"), ("max_step", "min_rank"))
    # each job its own buckets of steps: a job of 40 steps beside one of 30,000 is not one bucket
    widths = {b["key"]: _step_interval(value(b, "max_step")) for b in found}
    lowest = {b["key"]: value(b, "min_rank") for b in found}
    jobs = _series_read(search("step", _series_search(filters, widths, lowest)), widths, lowest) if widths else []
    for job, b in zip(jobs, found):
        job["records"] = b["doc_count"]
    return {"records": total(top), "jobs": jobs}


def _series_search(filters: Filters, widths: dict[str, int], lowest: dict[str, float | None]) -> dict[str, Any]:
    """Each job's line: its lowest rank's steps (all of them without ranks), bucketed by its width;
    one search that reads only those records (the query), each job's buckets under a filter."""
    def own(job: str) -> dict[str, Any]:
        rank = lowest.get(job)
        return {"bool": {"filter": [{"term": {"job": job}}, *([{"term": {"rank": int(rank)}}] if rank is not None else [])]}}

    per_job = {f"job{i}": {
        "filter": own(job),
        "aggs": {"over_steps": {"histogram": {"field": "step", "interval": width, "min_doc_count": 1},
                                "aggs": metric_aggs()},
                 "last_step": {"max": {"field": "step"}},
                 "latest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}],
                                         "_source": ["loss", "step", "time", "throughput_unit"]}}},
    } for i, (job, width) in enumerate(widths.items())}
    lines = {"bool": {"should": [own(job) for job in widths], "minimum_should_match": 1}}
    return {"size": 0, "query": filters.query(lines), "aggs": per_job}


def _series_read(r: dict[str, Any], widths: dict[str, int], lowest: dict[str, float | None]) -> list:
    aggs = r.get("aggregations") or {}
    jobs = []
    for i, (job, width) in enumerate(widths.items()):
        b = aggs.get(f"job{i}") or {}
        latest = ((b.get("latest") or {}).get("hits", {}).get("hits") or [{"_source": {}}])[0]["_source"]
        jobs.append({
            "job": job, "last_step": value(b, "last_step"), "line_rank": lowest.get(job),
            "latest_loss": latest.get("loss"), "throughput_unit": latest.get("throughput_unit"), "step_interval": width,
            "series": [{"step": p["key"], **{m: value(p, m) for m in METRICS}} for p in buckets(b, "over_steps")],
        })
    return jobs


def _step_interval(max_step: float | None) -> int:
    """Steps per bucket: about STEP_BUCKETS buckets up to the largest step, at least 1."""
    return max(1, math.ceil((max_step or 0) / STEP_BUCKETS))


def view(data: dict[str, Any]) -> dict[str, Any]:
    """The query's numbers plus the charts drawn from them."""
    def series(metric: str) -> dict[str, list[tuple[float, float]]]:
        return {j["job"]: [(p["step"], p[metric]) for p in j["series"] if p[metric] is not None] for j in data["jobs"]}

    unit = next((j["throughput_unit"] for j in data["jobs"] if j.get("throughput_unit")), "")
    return {
        **data,
        "charts": [
            charts.line_chart("Loss by step", series("loss"), x="step"),
            charts.line_chart(f"Throughput{' (' + unit + ')' if unit else ''} by step", series("throughput"), x="step"),
            charts.line_chart("Step time (s) by step", series("step_time_s"), " s", x="step"),
        ],
    }
