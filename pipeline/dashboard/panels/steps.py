"""Step metrics by optimizer step: loss, throughput and step time by job, and the spread across ranks.

Every chart is on a step axis (buckets of steps, STEP_BUCKETS of them up to the largest step),
so jobs logged days apart are drawn side by side instead of in one time bucket each. A job's
loss, throughput and step-time lines are its lowest rank's (rank 0's, as its log shows them; all
its records when they carry no rank): the query then reads one rank's steps, not every rank's
(on a million records, 32 ranks a job, a thirty-second of them). Ranks are compared within one
job: the filtered one, else the job among those drawn with the widest range of ranks that
report a step time (a job whose steps carry no rank or step time has nothing to compare). A straggler is a
rank whose median step time is more than STRAGGLER_RATIO times the median rank's (a median: one
long pause of a rank is a stall, not a slow rank). Beside them, the stragglers and stalls the
pipeline itself found (signal records: a rank slower than its peers at most of the same steps,
no new step for far longer than usual), newest first.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, hits, total, value

NAME = "steps"
TITLE = "Step metrics"
TEMPLATE = "steps.html.j2"

STRAGGLER_RATIO = 1.25
MAX_RANKS = 2048
STEP_BUCKETS = 100
SIGNALS = 50
SPREAD_CELLS = 20_000  # rank x step buckets of the spread chart (OpenSearch's max_buckets is 65,535)
_METRICS = ("loss", "throughput", "step_time_s")


def _metric_aggs() -> dict[str, Any]:
    return {m: {"avg": {"field": m}} for m in _METRICS}


def query(search: Search, filters: Filters) -> dict[str, Any]:
    top = search("step", {"size": 0, "track_total_hits": True, "query": filters.query(), "aggs": {
        "by_job": {"terms": {"field": "job", "size": 12}}}})  # fmt: skip
    found = _with_extremes(search, filters, buckets(top, "by_job"))
    # each job its own buckets of steps: a job of 40 steps beside one of 30,000 is not one bucket
    widths = {b["key"]: _step_interval(value(b, "max_step")) for b in found}
    lowest = {b["key"]: value(b, "min_rank") for b in found}
    comparable = [b for b in found if value(b, "timed") and value(b, "min_rank") is not None]
    widest = max(comparable, key=lambda b: (value(b, "max_rank") - value(b, "min_rank"), b["doc_count"]), default=None)
    focus = filters.job or (widest["key"] if widest else (found[0]["key"] if found else None))
    histogram = {"histogram": {"field": "step", "interval": _spread_interval(next(
        (b for b in found if b["key"] == focus), None)), "min_doc_count": 1}}
    # the lines, the ranks and the signals depend on each other in nothing: one _msearch, which
    # OpenSearch runs side by side, instead of one search after the other
    wanted = [("signal", _signals_search(filters))]
    if widths:
        wanted.append(("step", _series_search(filters, widths, lowest)))
    if focus:
        wanted.append(("step", _ranks_search(filters, focus, histogram)))
    answers = search.each(wanted)
    signals = _signals_read(answers[0])
    jobs = _series_read(answers[1], widths, lowest) if widths else []
    for job, b in zip(jobs, found):
        job["records"] = b["doc_count"]
    ranks, spread = (_ranks_read(answers[-1]) if focus else ([], []))
    times = [x["step_time_s"] for x in ranks if x["step_time_s"] is not None]
    median = statistics.median(times) if times else None
    for x in ranks:
        x["straggler"] = bool(median and x["step_time_s"] is not None and x["step_time_s"] > STRAGGLER_RATIO * median)
    return {"records": total(top), "jobs": jobs, "rank_job": focus, "ranks": ranks,
            "median_step_time_s": median, "straggler_ratio": STRAGGLER_RATIO,
            "stragglers": [x["rank"] for x in ranks if x["straggler"]], "spread": spread,
            "signals": signals}


_EXTREMES = {"max_step": ("step", "desc"), "min_rank": ("rank", "asc"), "max_rank": ("rank", "desc")}


def _with_extremes(search: Search, filters: Filters, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each job's bucket with its largest step, its range of ranks and whether any step has a time
    (as max/min aggregations would name them). Each is one search of size 1 sorted on that field,
    which OpenSearch answers from the field's points, skipping what cannot come first; the same
    numbers as aggregations under the job's bucket, which read every step record (150-300 ms on
    900,000 of them, the terms of jobs alone 5 ms). Request-cached as the aggregations were."""
    bodies = []
    for b in jobs:
        own = {"term": {"job": b["key"]}}
        for field, order in _EXTREMES.values():
            bodies.append({"size": 1, "track_total_hits": False, "_source": False,
                           "query": filters.query(own, {"exists": {"field": field}}), "sort": [{field: order}]})
        bodies.append({"size": 0, "track_total_hits": 1, "terminate_after": 1,
                       "query": filters.query(own, {"exists": {"field": "step_time_s"}})})
    answers = iter(search.each([("step", body) for body in bodies], cached=True))
    out = []
    for b in jobs:
        extremes = {}
        for name in _EXTREMES:
            first = (next(answers).get("hits", {}).get("hits") or [{}])[0]
            found = (first.get("sort") or [None])[0]
            extremes[name] = {"value": None if found is None else float(found)}
        extremes["timed"] = {"value": total(next(answers))}
        out.append({**b, **extremes})
    return out


def _series_search(filters: Filters, widths: dict[str, int], lowest: dict[str, float | None]) -> dict[str, Any]:
    """Each job's line: its lowest rank's steps (all of them without ranks), bucketed by its width;
    one search that reads only those records (the query), each job's buckets under a filter."""
    def own(job: str) -> dict[str, Any]:
        rank = lowest.get(job)
        return {"bool": {"filter": [{"term": {"job": job}}, *([{"term": {"rank": int(rank)}}] if rank is not None else [])]}}

    per_job = {f"job{i}": {
        "filter": own(job),
        "aggs": {"over_steps": {"histogram": {"field": "step", "interval": width, "min_doc_count": 1},
                                "aggs": _metric_aggs()},
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
            "series": [{"step": p["key"], **{m: value(p, m) for m in _METRICS}} for p in buckets(b, "over_steps")],
        })
    return jobs


def _signals_search(filters: Filters) -> dict[str, Any]:
    """The pipeline's straggler and stall signals: how many of each, and the newest SIGNALS."""
    return {
        "size": SIGNALS, "track_total_hits": True, "query": filters.query(),
        "sort": [{"time": {"order": "desc", "unmapped_type": "date_nanos"}}],
        "_source": ["signal", "job", "attempt", "pod", "rank", "step", "value", "baseline", "message", "time"],
        "aggs": {"kinds": {"terms": {"field": "signal", "size": 10}}},
    }


def _signals_read(r: dict[str, Any]) -> dict[str, Any]:
    return {"total": total(r), "by_kind": {b["key"]: b["doc_count"] for b in buckets(r, "kinds")}, "latest": hits(r)}


def _step_interval(max_step: float | None) -> int:
    """Steps per bucket: about STEP_BUCKETS buckets up to the largest step, at least 1."""
    return max(1, math.ceil((max_step or 0) / STEP_BUCKETS))


def _spread_interval(job: dict[str, Any] | None) -> int:
    """Steps per bucket of the rank spread: each rank has its own buckets, so a gang of many ranks
    gets fewer of them (ranks x buckets at most SPREAD_CELLS, under OpenSearch's max_buckets)."""
    if job is None:
        return 1
    low, high = value(job, "min_rank"), value(job, "max_rank")
    ranks = int(high - low + 1) if low is not None and high is not None else 1
    return max(1, math.ceil((value(job, "max_step") or 0) / max(1, min(STEP_BUCKETS, SPREAD_CELLS // ranks))))


def _ranks_search(filters: Filters, job: str, histogram: dict[str, Any]) -> dict[str, Any]:
    """Per-rank means of one job, and per bucket of steps the gap between its slowest and fastest rank
    (each rank's step times bucketed under its own rank bucket, the gap taken here: one histogram
    per rank costs less in OpenSearch than two rank orderings in every bucket of steps)."""
    return {
        "size": 0, "query": filters.query({"term": {"job": job}}),
        "aggs": {"by_rank": {"terms": {"field": "rank", "size": MAX_RANKS, "order": {"_key": "asc"}},
                             "aggs": {**_metric_aggs(), "last_step": {"max": {"field": "step"}},
                                      "median_time": {"percentiles": {"field": "step_time_s", "percents": [50]}},
                                      "over_steps": {**histogram, "aggs": {"st": {"avg": {"field": "step_time_s"}}}}}}},
    }


def _ranks_read(r: dict[str, Any]) -> tuple[list, list]:
    ranks, by_step = [], {}
    for b in buckets(r, "by_rank"):
        ranks.append({"rank": b["key"], "records": b["doc_count"], "last_step": value(b, "last_step"),
                      **{m: value(b, m) for m in _METRICS}, "step_time_s": _median(b)})
        for p in buckets(b, "over_steps"):
            if (took := value(p, "st")) is not None:
                by_step.setdefault(p["key"], []).append((took, b["key"]))
    spread = []
    for step, times in sorted(by_step.items()):
        if len(times) >= 2:
            slow, fast = max(times, key=lambda t: (t[0], -t[1])), min(times)  # ties: the lowest rank
            spread.append({"step": step, "spread_s": slow[0] - fast[0], "slowest_rank": slow[1]})
    return ranks, spread


def _median(bucket: dict[str, Any]) -> float | None:
    found = ((bucket.get("median_time") or {}).get("values") or {}).get("50.0")
    return None if found is None or (isinstance(found, float) and math.isnan(found)) else found


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
            charts.bar_chart(f"Median step time by rank, {job} (s); red: straggler",
                             [(str(x["rank"]), x["step_time_s"], x["straggler"]) for x in data["ranks"]], " s"),
        ],
    }
