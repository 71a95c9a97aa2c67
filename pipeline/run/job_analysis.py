"""The diagnosis of a job the consumer service saw end, from its records read back from OpenSearch.

The same back half as replay (pipeline/diagnose/back_half.py) over the job's records as indexed;
what it made before and does not make again (a diagnosis of an attempt that is no more, once late
events cut the job's attempts anew) is named, to be deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangscope.parsers.records import Record
from gangscope.pipeline.diagnose import back_half
from gangscope.pipeline.isolation import StageFailures, unit_of_work


@dataclass
class JobAnalysis:
    """Stragglers and diagnoses to index, and the earlier ones they replace (to delete)."""

    made: list[Record] = field(default_factory=list)
    stale: list[Record] = field(default_factory=list)


def analyse_job(job: str, indexed: list[Record], attempts: list | None, failures: StageFailures,
                digest_max_bytes: int | None = None) -> JobAnalysis | None:
    """The job's stragglers and diagnoses from `indexed` (its records, its earlier diagnoses among
    them); None when the back half raised (counted in `failures`: the records stay, undiagnosed)."""
    before = [r for r in indexed if r.kind == "diagnosis" or getattr(r, "signal", None) == "straggler"]
    records = [r for r in indexed if r.kind != "diagnosis"]
    with unit_of_work(failures, "diagnose", position=job, job=job) as unit:
        digest = back_half.digest_of(records, None, digest_max_bytes)  # events by time, as replay orders them
        found = back_half.analyse(digest, {job: attempts} if attempts else None, timelines=False, failures=failures)
    if unit.failed:
        return None
    made = [*found.stragglers, *found.diagnoses]
    ids = {r.id for r in made}
    return JobAnalysis(made=made, stale=[r for r in before if r.id not in ids])
