"""The jobs of the step index and their extremes, which the step and rank panels both start from.

A job's largest step, its range of ranks and whether any of its steps has a time (as max/min
aggregations would name them) come from searches of size 1 sorted on that field, which OpenSearch
answers from the field's points, skipping what cannot come first: the same numbers as aggregations
under the job's bucket, which read every step record (150-300 ms on 900,000 of them, the terms of
jobs alone 5 ms). A panel asks only for the extremes it uses.
"""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard.query import Filters, Search, total

METRICS = ("loss", "throughput", "step_time_s")
JOBS = 12
SORTED = {"max_step": ("step", "desc"), "min_rank": ("rank", "asc"), "max_rank": ("rank", "desc")}
EXTREMES = (*SORTED, "timed")


def metric_aggs() -> dict[str, Any]:
    return {m: {"avg": {"field": m}} for m in METRICS}


def top_jobs_search(filters: Filters, track_total_hits: bool = True) -> dict[str, Any]:
    """The JOBS jobs with the most step records (and, with track_total_hits, how many there are)."""
    return {"size": 0, "track_total_hits": track_total_hits, "query": filters.query(),
            "aggs": {"by_job": {"terms": {"field": "job", "size": JOBS}}}}


def with_extremes(search: Search, filters: Filters, jobs: list[dict[str, Any]],
                  names: tuple[str, ...] = EXTREMES) -> list[dict[str, Any]]:
    """Each job's bucket with the extremes `names` (of EXTREMES) as {"value": ...}, in one _msearch.
    Request-cached as the aggregations were."""
    bodies = []
    for b in jobs:
        own = {"term": {"job": b["key"]}}
        for name in names:
            if name == "timed":
                bodies.append({"size": 0, "track_total_hits": 1, "terminate_after": 1,
                               "query": filters.query(own, {"exists": {"field": "step_time_s"}})})
            else:
                field, order = SORTED[name]
                bodies.append({"size": 1, "track_total_hits": False, "_source": False,
                               "query": filters.query(own, {"exists": {"field": field}}), "sort": [{field: order}]})
    answers = iter(search.each([("step", body) for body in bodies], cached=True) if bodies else [])
    out = []
    for b in jobs:
        extremes = {}
        for name in names:
            answer = next(answers)
            if name == "timed":
                extremes[name] = {"value": total(answer)}
            else:
                first = (answer.get("hits", {}).get("hits") or [{}])[0]
                found = (first.get("sort") or [None])[0]
                extremes[name] = {"value": None if found is None else float(found)}
        out.append({**b, **extremes})
    return out
