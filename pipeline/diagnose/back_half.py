"""The back half of the pipeline, written once: curated records and attempts in, findings out.

Replay, `replay --from-kafka`, the consumer service and (through its caller) the report all
go through here:

    digest of curated records (progress records included) + each job's attempts (EventBook)
        -> stragglers (added to the digest: a diagnosis reads them)
        -> one diagnosis per job attempt
        -> each job's gang timeline, as plain data for the report

Replay hands in the digest it kept while writing; the service reads one finished job's records
back from OpenSearch and makes a digest of them with `digest_of`, in the order replay's digest
took them, so that both give the same stragglers and diagnoses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from gangscope.parsers.progress import find_stragglers
from gangscope.parsers.records import Record, job_key
from gangscope.pipeline.correlate.timeline import timeline
from gangscope.pipeline.curate.identity import with_derived_id
from gangscope.pipeline.diagnose.attempt import diagnose
from gangscope.pipeline.diagnose.digest import JobDigest
from gangscope.pipeline.diagnose.spooled_diagnoses import SpooledDiagnoses
from gangscope.pipeline.isolation import StageFailures, unit_of_work


@dataclass
class Findings:
    """What the back half makes of a run (or of one job).

    stragglers: straggler signals, new records for the sinks.
    diagnoses: one diagnosis record per job attempt, new records for the sinks: read whole, by job
        and attempt; `diagnoses.parts()`, the digest's parts' (they wait on disk: spooled_diagnoses.py).
    timelines: job -> its gang timeline (correlate.timeline, plain data), for the jobs with gang
        events; what report.html draws.
    """

    stragglers: list[Record] = field(default_factory=list)
    diagnoses: SpooledDiagnoses = field(default_factory=SpooledDiagnoses)
    timelines: dict[str, dict[str, Any]] = field(default_factory=dict)


def analyse(digest: JobDigest, attempts: Mapping[str, list] | None, *, timelines: bool = True,
            failures: StageFailures | None = None, jobs: Iterable[str] = ()) -> Findings:
    """Stragglers, diagnoses and timelines of the jobs in `digest`.

    digest: the curated records kept for diagnosis; the stragglers found are added to it.
    attempts: job -> its attempts (EventBook.attempts, or the part of it for the jobs in the
        digest); every attempt given gets a diagnosis, with or without records.
    timelines: False leaves them out (the service draws no report).
    failures: where an attempt whose diagnosis raises, or a timeline that cannot be drawn, is
        counted (stages "diagnose" and "report"); the rest goes on.
    jobs: every job whose log was read; one with neither records nor attempts still gets the
        diagnosis of its first attempt (a log with nothing to curate is `running`, never absent).
    """
    attempts = attempts or {}
    stragglers = stragglers_of(digest, failures)
    for r in stragglers:
        digest.add(r)
    # A part of the jobs at a time (the digest's parts: all of it when it is all in memory); a job's
    # diagnosis and timeline read its own records only, so the parts give what the whole would.
    count = digest.part_count()
    attempts_in: list[list] = [[] for _ in range(count)]
    for job_attempts in attempts.values():
        for a in job_attempts:
            attempts_in[digest.part_of(str(a.job))].append(a)
    jobs_in: list[list[str]] = [[] for _ in range(count)]
    for job in jobs:
        jobs_in[digest.part_of(job)].append(job)
    diagnosed = SpooledDiagnoses()  # one run per part, empty ones too: the report takes them beside the parts
    drawn: dict[str, dict[str, Any]] = {}
    for n, part in enumerate(digest.parts()):
        if not (part or attempts_in[n] or jobs_in[n]):
            diagnosed.add_part(())
            continue
        records = in_reading_order(part)
        del part
        diagnoses = list(diagnose(records, attempts_in[n] or None, failures, jobs=jobs_in[n]))
        diagnosed.add_part(diagnoses)
        if timelines:
            drawn.update(job_timelines(records, attempts, diagnoses, failures))
        del records, diagnoses  # before the next part is read
    # read whole, in the order one call over every job gives: by job and attempt; timelines by job
    found = Findings(stragglers, diagnosed)
    if timelines:
        found.timelines = dict(sorted(drawn.items()))
    return found


def stragglers_of(digest: JobDigest, failures: StageFailures | None = None) -> list[Record]:
    """The straggler signals of each job's steps, job by job (in the order one call over all of
    them gives). With `failures`, a job whose stragglers cannot be found is counted there (stage
    "correlate") and has none; the other jobs go on. The series are read a part of the jobs at a
    time (they wait on disk); what each gave is said in the order of the jobs."""
    found_by_job: dict[str, list[Record] | Exception] = {}
    for job, series in digest.step_series():
        try:
            found_by_job[job] = [with_derived_id(r) for r in find_stragglers(series)]
        except Exception as exc:  # counted below, in the order of the jobs
            found_by_job[job] = exc
    out: list[Record] = []
    for job in sorted(found_by_job):
        found: list[Record] = []
        with unit_of_work(failures, "correlate", position=job or None, job=job or None, step="stragglers"):
            result = found_by_job.pop(job)
            if isinstance(result, Exception):
                raise result
            found = result
        out.extend(found)
    return out


def job_timelines(records: Iterable[Record], attempts: Mapping[str, list], diagnoses: list[Record],
                  failures: StageFailures | None = None) -> dict[str, dict[str, Any]]:
    """Each job with gang events: its attempts, its events and each diagnosed first failure
    from the logs on one time axis (a log-derived failure drawn beside the scheduler's)."""
    events: dict[str, list[Record]] = {}
    for r in records:
        if r.kind == "event":
            events.setdefault(job_key(r), []).append(r)
    failed: dict[str, list[Record]] = {}
    for d in diagnoses:
        if getattr(d, "first_failure", None):
            failed.setdefault(d.job or job_key(d), []).append(d)
    out: dict[str, dict[str, Any]] = {}
    for job in sorted(events):
        with unit_of_work(failures, "report", position=job, section="timeline", job=job) as unit:
            drawn = timeline(job, attempts.get(job, []), events[job], failures=failed.get(job, []))
        if not unit.failed:
            out[job] = drawn
    return out


def in_reading_order(records: list[Record], event_order: Mapping[str, int] | None = None) -> list[Record]:
    """The records as a diagnosis lists them, whichever way they came (pod by pod from files, in
    poll batches, read back from a store): events in the order they were read (`event_order`:
    id -> position; by default their order in `records`), every other kind by time, seq, step and id.
    The step: one line holds many states of a bar (carriage returns), all of its time and seq, in
    the order of their steps; by id alone a rank's last step read back was any of them (a diagnosis
    said step 36 where replay, reading the line in order, said 38)."""
    if not event_order:
        # by time, not by arrival: the diagnosis of an attempt does not depend on the order its events
        # were read in (a file's, a topic's, an index's after a restart)
        events = sorted((r for r in records if r.kind == "event"), key=lambda r: (r.time or "", r.id))
        event_order = {r.id: i for i, r in enumerate(events)}
        if not events:
            # no event: every key would lead with 0, and the sort would compare whole tuples (its
            # fast compare of strings and ints goes by the keys' first items). The same order.
            return sorted(records, key=_time_key)
    last = len(event_order)
    return sorted(records, key=lambda r: (event_order.get(r.id, last) if r.kind == "event" else 0,
                                          r.time or "", r.seq, _step_of(r), r.id))


def _time_key(r: Record) -> tuple:
    """A record's place among records of no event: by time, seq, step and id."""
    return (r.time or "", r.seq, _step_of(r), r.id)


def _step_of(record: Record) -> int:
    step = getattr(record, "step", None)
    return step if type(step) is int else -1


def digest_of(records: list[Record], event_order: Mapping[str, int] | None = None,
              max_bytes: int | None = None) -> JobDigest:
    """A digest of one job's records read back from a store, taken in reading order (events as
    `event_order` says they were read: id -> position). Stragglers found before are left out:
    `analyse` finds them again from the steps."""
    records = in_reading_order(records, event_order or {})
    digest = JobDigest() if max_bytes is None else JobDigest(max_bytes=max_bytes)
    for r in records:
        if r.kind != "signal" or getattr(r, "signal", None) != "straggler":
            digest.add(r)
    return digest
