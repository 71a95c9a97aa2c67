"""Late gang events: the attempt of records already written, worked out again.

The consumer service stamps a log line with the attempt its time falls in as far as the events
read so far say. When events come later (an exporter that lags, a backfill), the attempts of a job
are cut anew, and what was written for it must end as a replay with every event read first would
have written it. Line records (step, error, trace) keep their id (it is the line's, not the
attempt's): only their `attempt` field changes. Records derived per attempt (a rank's epoch
progress and its stalls) are derived again from the job's steps in their new attempts.
"""

from __future__ import annotations

from typing import Callable, Iterable

from gangscope.parsers.records import Record
from gangscope.pipeline.correlate.progress import DerivedProgress

LINE_KINDS = ("step", "error", "trace")
DERIVED_KINDS = ("epoch", "signal")  # per attempt: epoch progress, stalls (and the diagnosis' stragglers)


def attempt_cuts(attempts: Iterable) -> tuple:
    """What of a job's attempts decides the attempt of a line: their numbers and starts."""
    return tuple((a.number, a.start) for a in attempts)


def restamped(records: Iterable[Record], attempt_of: Callable[[str | None, str | None], int]) -> list[Record]:
    """The line records whose attempt changes under `attempt_of`, with the new attempt set."""
    changed = []
    for r in records:
        if r.kind not in LINE_KINDS:
            continue
        attempt = attempt_of(r.job, r.time)
        if attempt != r.attempt:
            r.attempt = attempt
            changed.append(r)
    return changed


def step_order(record: Record) -> tuple:
    """The order a rank's steps were curated in: by rank, then as their lines came."""
    return (record.namespace or "", record.pod or "", record.container or "", record.rank if record.rank is not None else -1,
            record.local_rank if record.local_rank is not None else -1, record.time or "", record.stream or "", record.seq)


def progress_again(steps: Iterable[Record]) -> tuple[DerivedProgress, list[Record]]:
    """A job's progress derived anew from its step records (attempts as they now stand): the
    tracker, ready to take the next steps, and the progress records it gave, the last of each id."""
    progress = DerivedProgress()
    ordered = sorted((r for r in steps if r.kind == "step"), key=step_order)
    latest: dict[str, Record] = {}
    for r in progress.derive(ordered):
        latest[r.id] = r
    return progress, list(latest.values())


def is_stall(record: Record) -> bool:
    return record.kind == "signal" and getattr(record, "signal", None) == "stall"
