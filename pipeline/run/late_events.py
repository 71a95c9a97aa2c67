"""The consumer's answer to gang events that come after the log lines they cut into attempts.

When the attempts of a job change (`attempt_cuts` before and after an event batch differ), the job
is corrected once what was curated before is acknowledged: its line records get the attempt a
replay with every event read first gives them (in place: their ids do not depend on the attempt),
its progress is derived again from its steps, progress records no longer made are deleted, and a
job already diagnosed is diagnosed again. Why in place rather than re-stamp and delete: a step's id
holds the pod uid, which its document does not; the id of a line record is the line's, so no
document of it is ever left behind under an old attempt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangscope.parsers.records import Record
from gangscope.pipeline.correlate.restamp import DERIVED_KINDS, LINE_KINDS, is_stall, progress_again, restamped
from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.run import job_index


@dataclass
class Correction:
    """What correcting one job did: documents moved to another attempt, progress records to index
    (through the service's acknowledged path), documents deleted, and whether it had a diagnosis."""

    moved: int = 0
    records: list[Record] = field(default_factory=list)
    deleted: int = 0
    diagnosed: bool = False


def correct_job(job: str, *, client, prefix: str, attempt_of, partitions: list[LogPartition],
                job_end: float | None) -> Correction:
    """Bring the job's records in OpenSearch to the attempts `attempt_of` gives now.

    partitions: this consumer's log partitions; those curating the job's containers take its
        ranks' progress, derived anew, and go on from it. When none does (the job's attempt is
        over here), every rank gets its last word now, judged against `job_end`."""
    found = job_index.job_records(client, prefix, job, (*LINE_KINDS, *DERIVED_KINDS, "diagnosis"))
    done = Correction(diagnosed=any(r.kind == "diagnosis" for r in found))
    moved = restamped(found, attempt_of)
    done.moved = job_index.set_attempts(client, prefix, moved)
    progress, derived = progress_again([r for r in found if r.kind == "step"])
    live = [p for p in partitions if job in p.jobs()]
    for partition in partitions:
        if partition.progress is not None:
            partition.progress.forget_job(job)
    if live:
        for partition in live:
            if partition.progress is None:
                continue
            mine = partition.containers_of(job)
            partition.progress.take_ranks(progress, lambda r, mine=mine: (r.namespace, r.pod, r.container) in mine)
    else:
        derived = [*derived, *progress.finish_job(job, job_end)]
    latest = {r.id: r for r in derived}
    stale = [r for r in found if (r.kind == "epoch" or is_stall(r)) and r.id not in latest]
    done.deleted = job_index.delete(client, prefix, stale)
    done.records = list(latest.values())
    return done
