"""The records of each job attempt, gathered for diagnosis."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from gangscope.parsers.records import (EpochRecord, ErrorRecord, EventRecord, Record, SignalRecord, StepRecord, TraceRecord,
                                      from_dict, job_key)


@dataclass
class AttemptView:
    """The records of one job attempt, sorted by kind."""

    job: str
    attempt: int
    errors: list[ErrorRecord] = field(default_factory=list)
    traces: list[TraceRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    epochs: list[EpochRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    signals: list[SignalRecord] = field(default_factory=list)
    meta: Any = None  # the gang's Attempt (duck-typed: job, number, start, end, end_reason, event_ids)


def group_attempts(records: Iterable[Record | dict], attempts: Iterable[Any] | None = None,
                   jobs: Iterable[str] = ()) -> list[AttemptView]:
    """One AttemptView per (job, attempt) of the records (dicts are decoded) and of the gang's `attempts`,
    and an empty first attempt for each of `jobs` that has neither; sorted."""
    views: dict[tuple[str, int], AttemptView] = {}

    def view(job: str, number: int) -> AttemptView:
        key = (job, number)
        if key not in views:
            views[key] = AttemptView(job, number)
        return views[key]

    for meta in attempts or ():
        view(str(meta.job), int(meta.number)).meta = meta
    buckets = {"error": "errors", "trace": "traces", "step": "steps", "epoch": "epochs", "event": "events", "signal": "signals"}
    for record in records:
        if isinstance(record, dict):
            record = from_dict(record)
        bucket = buckets.get(record.kind)
        if bucket is None:
            continue
        key = (job_key(record), record.attempt or 1)
        found = views.get(key)  # (view() inline: one call less a record)
        if found is None:
            found = views[key] = AttemptView(*key)
        getattr(found, bucket).append(record)
    seen = {job for job, _ in views}
    for job in jobs:
        if job not in seen:
            view(job, 1)
    return [views[k] for k in sorted(views)]
