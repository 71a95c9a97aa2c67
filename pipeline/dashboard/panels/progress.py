"""Epoch progress per job: its status, epoch n/N, step n/N, progress, ETA and the last update.

The status is the outcome of the job's latest diagnosed attempt (running, succeeded, failed,
evicted); only a running attempt has an ETA: a failed one shows where it stopped.
"""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.dashboard.query import Filters, Search, buckets, iso_ms
from gangscope.pipeline.sinks.indices import OpenSearchError

NAME = "progress"
TITLE = "Epoch progress"
TEMPLATE = "progress.html.j2"

_FIELDS = ["job", "attempt", "epoch", "total_epochs", "step", "total_steps", "progress", "eta_s", "time", "pod", "rank"]


def _latest_per_job(search: Search, kind: str, filters: Filters) -> dict[str, dict[str, Any]]:
    r = search(kind, {
        "size": 0, "query": filters.query(),
        "aggs": {"jobs": {"terms": {"field": "job", "size": 500},
                          "aggs": {"latest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}],
                                                           "_source": _FIELDS}}}}},
    })  # the records of a job are its bucket's doc_count (a value_count of ids read every record again)
    out = {}
    for b in buckets(r, "jobs"):
        hit = b["latest"]["hits"]["hits"]
        if hit:
            out[b["key"]] = {**hit[0]["_source"], "records": b["doc_count"]}
    return out


_BY_JOB_NEWEST = (("job", "asc"), ("time", "desc"))


def _latest_step_per_job(search: Search, filters: Filters) -> dict[str, dict[str, Any]]:
    """The same as _latest_per_job("step"), on a step index sorted on job then time, newest first
    (templates/index/step.json.j2, schema 2): the jobs come from a terms of jobs alone, then each job's
    newest record from one search of size 1 sorted as the index is, which stops at the first hit of
    each segment, where one top_hits per job reads every step record. On an index not yet rebuilt
    sorted, such a search would read every record of the job (15x slower): the top_hits then."""
    if search.index_sort("step")[:2] != _BY_JOB_NEWEST:
        return _latest_per_job(search, "step", filters)
    r = search("step", {"size": 0, "query": filters.query(), "aggs": {"jobs": {"terms": {"field": "job", "size": 500}}}})
    jobs = buckets(r, "jobs")
    answers = search.each([("step", {
        "size": 1, "track_total_hits": False, "query": filters.query({"term": {"job": b["key"]}}),
        "sort": [{"job": {"order": "asc"}}, {"time": {"order": "desc"}}], "_source": _FIELDS,
    }) for b in jobs], cached=True)
    out = {}
    for b, answer in zip(jobs, answers):
        hit = answer.get("hits", {}).get("hits") or []
        if hit:
            out[b["key"]] = {**hit[0]["_source"], "records": b["doc_count"]}
    return out


def query(search: Search, filters: Filters) -> dict[str, Any]:
    """One row per job, newest update first, from its latest epoch record and latest step record."""
    epochs = _latest_per_job(search, "epoch", filters)
    steps = _latest_step_per_job(search, filters)
    statuses = _statuses(search, filters)
    rows = []
    for job in sorted(set(epochs) | set(steps)):
        e, s = epochs.get(job, {}), steps.get(job, {})
        newest = max((e, s), key=lambda r: iso_ms(r.get("time")) or 0)
        step = newest.get("step") if newest.get("step") is not None else (e.get("step") or s.get("step"))
        total_steps = newest.get("total_steps") or e.get("total_steps") or s.get("total_steps")
        epoch = newest.get("epoch") if newest.get("epoch") is not None else (e.get("epoch") or s.get("epoch"))
        total_epochs = e.get("total_epochs")
        progress = e.get("progress") if newest is e else None
        if progress is None and step is not None and total_steps:
            progress = min(1.0, step / total_steps)
        if progress is None and epoch is not None and total_epochs:
            progress = min(1.0, epoch / total_epochs)
        status = statuses.get(job, {})
        outcome = status.get("outcome") if status.get("attempt") in (None, newest.get("attempt")) else None
        eta_s = e.get("eta_s") if e else None  # the log's last word; the page shows it for running attempts only
        eta_at = None
        if eta_s is not None and iso_ms(e.get("time")) is not None:
            eta_at = iso_ms(e.get("time")) + eta_s * 1000
        rows.append({
            "job": job,
            "status": outcome or "unknown",
            "running": outcome in (None, "running"),
            "category": status.get("category") if outcome else None,
            "attempt": newest.get("attempt"),
            "epoch": epoch,
            "total_epochs": total_epochs,
            "step": step,
            "total_steps": total_steps,
            "progress": progress,
            "eta_s": eta_s,
            "eta_at_ms": eta_at,
            "last_update": newest.get("time"),
            "epoch_records": e.get("records", 0),
            "step_records": s.get("records", 0),
        })
    rows.sort(key=lambda r: iso_ms(r["last_update"]) or 0, reverse=True)
    return {"jobs": rows}


def _statuses(search: Search, filters: Filters) -> dict[str, dict[str, Any]]:
    """job -> its latest attempt's diagnosis (attempt, outcome, category); {} when there is none.
    Diagnoses have no time of their own: only the job filter applies."""
    query = {"term": {"job": filters.job}} if filters.job else {"match_all": {}}
    try:
        r = search("diagnosis", {
            "size": 0, "query": query,
            "aggs": {"jobs": {"terms": {"field": "job", "size": 500},
                              "aggs": {"latest": {"top_hits": {"size": 1, "sort": [{"attempt": {"order": "desc"}}],
                                                               "_source": ["attempt", "outcome", "category"]}}}}},
        })
    except OpenSearchError:
        return {}
    return {b["key"]: b["latest"]["hits"]["hits"][0]["_source"] for b in buckets(r, "jobs") if b["latest"]["hits"]["hits"]}


def view(data: dict[str, Any]) -> dict[str, Any]:
    return data
