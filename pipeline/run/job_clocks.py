"""When the consumer takes a job's attempt to be over: each job's clock (its last line read, the
time an end event asked for it to be closed) and the test of which jobs are due.

A job is due once every partition curating it has caught up (no line of it may still wait in
Kafka) and it has been quiet for `attempt_idle`, or its end event's grace has passed; but not
while a traceback of it is still open, for at most `open_wait` (its end may yet come: a pause in
delivery, its events read before its lines), as flush_idle waits for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from gangscope.pipeline.curate.partition import LogPartition


@dataclass
class JobClock:
    last_line: float
    finish_at: float | None = None  # an end event asked for the attempt to be closed then


def due_jobs(jobs: dict[str, JobClock], partitions: list[LogPartition], now: float, attempt_idle: float,
             open_wait: float) -> Iterator[str]:
    """The jobs of `jobs` whose attempt is over now, one at a time (the caller may finish each and
    remove it from `jobs` before the next is looked at). partitions: this consumer's log partitions."""
    holders: dict[str, list[LogPartition]] = {}
    if jobs:
        for state in partitions:
            for job in state.jobs():
                holders.setdefault(job, []).append(state)
    for job, clock in list(jobs.items()):
        quiet = [s.quiet_since(clock.last_line) for s in holders.get(job, ())]
        if any(q is None for q in quiet):
            continue  # lines of the job may still wait in Kafka
        since = max(quiet, default=clock.last_line)
        due = now - since >= attempt_idle or (clock.finish_at is not None and now >= clock.finish_at)
        if due and now - since < open_wait and any(s.holds_open(job) for s in holders.get(job, ())):
            due = False  # a traceback of it is still open: it waits for its end
        if due:
            yield job
