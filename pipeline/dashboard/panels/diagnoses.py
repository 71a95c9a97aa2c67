"""Diagnoses of failed attempts: root cause, summary, evidence and symptoms."""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard.query import Filters, Search, buckets, hits, total

NAME = "diagnoses"
TITLE = "Diagnoses"
TEMPLATE = "diagnoses.html.j2"
LIMIT = 100


def query(search: Search, filters: Filters) -> dict[str, Any]:
    r = search("diagnosis", {
        "size": LIMIT, "track_total_hits": True,
        "query": filters.query(must_not=[{"term": {"outcome": "succeeded"}}]),
        "sort": [{"time": {"order": "desc", "unmapped_type": "date_nanos"}}, {"job": {"order": "asc"}},
                 {"attempt": {"order": "desc"}}],
        "_source": ["job", "attempt", "time", "outcome", "category", "exception_type", "first_failure", "summary",
                    "evidence", "symptoms", "events", "confidence"],
    })
    outcomes = search("diagnosis", {"size": 0, "query": filters.query(),
                                    "aggs": {"outcomes": {"terms": {"field": "outcome", "size": 10}}}})
    return {
        "failed": total(r),
        "outcomes": {b["key"]: b["doc_count"] for b in buckets(outcomes, "outcomes")},
        "diagnoses": hits(r),
    }


def view(data: dict[str, Any]) -> dict[str, Any]:
    return data
