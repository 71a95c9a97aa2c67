"""Which rank is slow: the ranks of one job compared, their spread by step, and the stragglers and
stalls the pipeline itself found.

Ranks are compared within one job: the filtered one, else the job among the JOBS with the most step
records with the widest range of ranks that report a step time (a job whose steps carry no rank or
step time has nothing to compare). A straggler is a rank whose median step time is more than
STRAGGLER_RATIO times the median rank's (a median: one long pause of a rank is a stall, not a slow
rank). The spread is, per bucket of steps, the gap between the slowest and the fastest rank's mean
step time. Beside them, the pipeline's signal records (a rank slower than its peers at most of the
same steps, no new step for far longer than usual), newest first. The loss, throughput and step-time
lines of every job are the step panel's (steps.py), its own query.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from gangscope.pipeline.dashboard import charts
from gangscope.pipeline.dashboard.panels.step_jobs import METRICS, metric_aggs, top_jobs_search, with_extremes
from gangscope.pipeline.dashboard.query import Filters, Search, buckets, hits, total, value

NAME = "ranks"
TITLE = "Stragglers and rank spread"
TEMPLATE = "ranks.html.j2"

STRAGGLER_RATIO = 1.25
MAX_RANKS = 2048
STEP_BUCKETS = 100
SIGNALS = 50
SPREAD_CELLS = 20_000  # rank x step buckets of the spread chart (OpenSearch's max_buckets is 65,535)


def query(search: Search, filters: Filters) -> dict[str, Any]:
    focus, job = _focus(search, filters)
    # the ranks and the signals depend on each other in nothing: one _msearch, run side by side
    wanted = [("signal", _signals_search(filters))]
    if focus:
        wanted.append(("step", _ranks_search(filters, focus, _spread_interval(job))))
    answers = search.each(wanted)
    ranks, spread = _ranks_read(answers[1]) if focus else ([], [])
    times = [x["step_time_s"] for x in ranks if x["step_time_s"] is not None]
    median = statistics.median(times) if times else None
    for x in ranks:
        x["straggler"] = bool(median and x["step_time_s"] is not None and x["step_time_s"] > STRAGGLER_RATIO * median)
    return {"rank_job": focus, "ranks": ranks, "median_step_time_s": median, "straggler_ratio": STRAGGLER_RATIO,
            "stragglers": [x["rank"] for x in ranks if x["straggler"]], "spread": spread,
            "signals": _signals_read(answers[0])}


def _focus(search: Search, filters: Filters) -> tuple[str | None, dict[str, Any] | None]:
    """The job whose ranks are compared, and its bucket with its largest step and range of ranks
    (None when it has no step records). Every job's range of ranks first, then the largest step of
    the one chosen only: the steps of the others are not needed here."""
    found = with_extremes(search, filters, buckets(search("step", top_jobs_search(filters, False)), "by_job"),
                          ("min_rank", "max_rank", "timed"))
    comparable = [b for b in found if value(b, "timed") and value(b, "min_rank") is not None]
    widest = max(comparable, key=lambda b: (value(b, "max_rank") - value(b, "min_rank"), b["doc_count"]), default=None)
    focus = filters.job or (widest["key"] if widest else (found[0]["key"] if found else None))
    job = next((b for b in found if b["key"] == focus), None)
    if job is not None:
        job = with_extremes(search, filters, [job], ("max_step",))[0]
    return focus, job


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


def _spread_interval(job: dict[str, Any] | None) -> int:
    """Steps per bucket of the rank spread: each rank has its own buckets, so a gang of many ranks
    gets fewer of them (ranks x buckets at most SPREAD_CELLS, under OpenSearch's max_buckets)."""
    if job is None:
        return 1
    low, high = value(job, "min_rank"), value(job, "max_rank")
    ranks = int(high - low + 1) if low is not None and high is not None else 1
    return max(1, math.ceil((value(job, "max_step") or 0) / max(1, min(STEP_BUCKETS, SPREAD_CELLS // ranks))))


def _ranks_search(filters: Filters, job: str, interval: int) -> dict[str, Any]:
    """Per-rank means of one job, and per bucket of steps the gap between its slowest and fastest rank
    (each rank's step times bucketed under its own rank bucket, the gap taken here: one histogram
    per rank costs less in OpenSearch than two rank orderings in every bucket of steps)."""
    histogram = {"histogram": {"field": "step", "interval": interval, "min_doc_count": 1}}
    return {
        "size": 0, "query": filters.query({"term": {"job": job}}),
        "aggs": {"by_rank": {"terms": {"field": "rank", "size": MAX_RANKS, "order": {"_key": "asc"}},
                             "aggs": {**metric_aggs(), "last_step": {"max": {"field": "step"}},
                                      "median_time": {"percentiles": {"field": "step_time_s", "percents": [50]}},
                                      "over_steps": {**histogram, "aggs": {"st": {"avg": {"field": "step_time_s"}}}}}}},
    }


def _ranks_read(r: dict[str, Any]) -> tuple[list, list]:
    ranks, by_step = [], {}
    for b in buckets(r, "by_rank"):
        ranks.append({"rank": b["key"], "records": b["doc_count"], "last_step": value(b, "last_step"),
                      **{m: value(b, m) for m in METRICS}, "step_time_s": _median(b)})
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
    job = data["rank_job"] or ""
    return {
        **data,
        "charts": [
            charts.line_chart(f"Rank spread of step time, {job} (slowest - fastest rank, s)",
                              {job: [(p["step"], p["spread_s"]) for p in data["spread"]]}, " s", x="step"),
            charts.bar_chart(f"Median step time by rank, {job} (s); red: straggler",
                             [(str(x["rank"]), x["step_time_s"], x["straggler"]) for x in data["ranks"]], " s"),
        ],
    }
