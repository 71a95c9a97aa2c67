"""Stack trace groups: one row per fingerprint with its spread over ranks and pods, and one example."""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard.query import Filters, Search, as_string, buckets, total, value

NAME = "traces"
TITLE = "Stack traces"
TEMPLATE = "traces.html.j2"
GROUPS = 50


def query(search: Search, filters: Filters) -> dict[str, Any]:
    r = search("trace", {
        "size": 0, "track_total_hits": True, "query": filters.query(),
        "aggs": {"groups": {
            "terms": {"field": "fingerprint", "size": GROUPS},
            "aggs": {
                "exception": {"terms": {"field": "exception_type", "size": 1}},
                "ranks": {"terms": {"field": "rank", "size": 16, "order": {"_key": "asc"}}},
                "rank_count": {"cardinality": {"field": "rank"}},
                "pods": {"terms": {"field": "pod", "size": 8, "order": {"_key": "asc"}}},
                "pod_count": {"cardinality": {"field": "pod"}},
                "jobs": {"terms": {"field": "job", "size": 5}},
                "first": {"min": {"field": "time"}},
                "last": {"max": {"field": "time"}},
                "example": {"top_hits": {"size": 1, "sort": [{"time": {"order": "asc"}}],
                                         "_source": ["exception_type", "message", "text", "pod", "rank", "job",
                                                     "time", "truncated"]}},
            },
        }},
    })
    groups = []
    for b in buckets(r, "groups"):
        example = (b["example"]["hits"]["hits"] or [{"_source": {}}])[0]["_source"]
        exc = buckets(b, "exception")
        groups.append({
            "fingerprint": b["key"],
            "count": b["doc_count"],
            "exception_type": exc[0]["key"] if exc else example.get("exception_type"),
            "message": example.get("message"),
            "ranks": [x["key"] for x in buckets(b, "ranks")],
            "rank_count": int(value(b, "rank_count") or 0),
            "pods": [x["key"] for x in buckets(b, "pods")],
            "pod_count": int(value(b, "pod_count") or 0),
            "jobs": [x["key"] for x in buckets(b, "jobs")],
            "first_seen": as_string(b, "first"),
            "last_seen": as_string(b, "last"),
            "example": example,
        })
    return {"total": total(r), "groups": groups}


def view(data: dict[str, Any]) -> dict[str, Any]:
    return data
