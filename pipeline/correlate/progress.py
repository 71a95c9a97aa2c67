"""Progress records derived from the step records of a stream of curated records.

Written once for both drivers: replay keeps one `DerivedProgress` per pod group (and takes it
back from a worker process), the consumer service one per Kafka partition (inside its
LogPartition, so that a checkpoint carries it). The tracking itself is parsers.progress; here
are its inputs (the step records among a batch), its outputs' ids, and the end of a job.
"""

from __future__ import annotations

from typing import Mapping

from gangscope.parsers.progress import ProgressTracker, TrackerState
from gangscope.parsers.records import Record, StepRecord
from gangscope.pipeline.curate.identity import with_derived_id
from gangscope.pipeline.isolation import StageFailures, record_place


class DerivedProgress:
    """Epoch progress and stall signals of every rank whose steps it is fed."""

    def __init__(self) -> None:
        self.tracker = ProgressTracker()

    def snapshot(self) -> TrackerState:
        """The progress of every rank, as plain data (curate.snapshot)."""
        return self.tracker.snapshot()

    def restore(self, state: TrackerState) -> None:
        self.tracker.restore(state)

    def derive(self, records: list[Record], start: int = 0, failures: StageFailures | None = None) -> list[Record]:
        """The progress records the step records among `records[start:]` make, with their ids.
        With `failures`, a step record the tracker raises on is counted there (stage "correlate")
        and gives no progress; the others go on."""
        add = self.tracker.add
        derived: list[Record] = []
        for i in range(start, len(records)):
            record = records[i]
            if type(record) is StepRecord:  # (kind "step": no class derives from it)
                try:
                    derived.extend(add(record))
                except Exception as exc:
                    if failures is None:
                        raise
                    failures.add("correlate", exc, step="progress", **record_place(record))
        return [with_derived_id(r) for r in derived] if derived else derived

    def finish_job(self, job: str | None, job_end: float | None) -> list[Record]:
        """The job's attempt is over: each of its ranks' last progress state, a rank judged
        stalled against `job_end` (epoch seconds of the job's latest line). Its ranks are forgotten."""
        return [with_derived_id(r) for r in self.tracker.finish_job(job, job_end)]

    def finish(self, job_end: Mapping[str, float]) -> list[Record]:
        """Every rank's last progress state, each judged against its job's end (`job_end`:
        job -> epoch seconds of its latest line, as CurationStats.job_end keeps it)."""
        return [with_derived_id(r) for r in self.tracker.finish_each(job_end)]

    def forget_job(self, job: str | None) -> None:
        """Drop the ranks of `job` without a last word (their progress is being derived anew)."""
        state = self.tracker.snapshot()
        if any(r.job == job for r in state.ranks):
            state.ranks = [r for r in state.ranks if r.job != job]
            state.job_end = [e for e in state.job_end if e.job != job]
            self.tracker.restore(state)

    def take_ranks(self, other: "DerivedProgress", wanted) -> None:
        """Take over the ranks of `other` for which `wanted(rank_state)` holds (a RankState:
        job, attempt, namespace, pod, container, rank, local_rank), with their jobs' latest step times."""
        theirs = other.tracker.snapshot()
        moved = [r for r in theirs.ranks if wanted(r)]
        if not moved:
            return
        mine = self.tracker.snapshot()
        mine.ranks = [*mine.ranks, *moved]
        jobs = {(r.job, r.attempt) for r in moved}
        known = {(e.job, e.attempt) for e in mine.job_end}
        mine.job_end = [*mine.job_end, *(e for e in theirs.job_end if (e.job, e.attempt) in jobs - known)]
        self.tracker.restore(mine)
