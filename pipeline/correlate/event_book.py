"""The gang events known so far and the attempts they cut.

The consumer service adds events as they arrive and asks which attempt a log line belongs to
(`EventBook`, built up event batch by event batch); replay reads all of a run's events once and
keeps on disk what attempts do not need (`EventStream`). Both cut the attempts with one function,
correlate/attempts.build_attempts.
"""

from __future__ import annotations

import tempfile
from typing import Any, Iterator

import msgspec

from gangscope.parsers.id_set import IdSet
from gangscope.parsers.records import EventRecord, encode
from gangscope.pipeline.correlate.attempts import JOB_SIGNALS, build_attempts
from gangscope.pipeline.correlate.linking import Index, link_events
from gangscope.pipeline.correlate.signals import classify
from gangscope.pipeline.correlate.stamping import attempt_lookup
from gangscope.pipeline.curate.naming import JOB_KINDS


class EventBook:
    """The gang events known, the attempts they cut, and which attempts ended.

    max_events: the most events kept (the oldest go first); None keeps all (a batch run).
    """

    def __init__(self, max_events: int | None = 200_000):
        self.max_events = max_events
        self.events: dict[str, Any] = {}
        self.attempts: dict[str, list] = {}
        self.ended: set[tuple[str, int]] = set()
        self._lookup = None

    def fresh(self, records: list) -> list:
        """The records whose id is new here: one occurrence is one record, the first copy read wins
        (as parsers.events.decode_event_stream keeps it for a file)."""
        seen: set[str] = set()
        out = []
        for r in records:
            if r.id not in self.events and r.id not in seen:
                seen.add(r.id)
                out.append(r)
        return out

    def add(self, records: list, failures=None) -> tuple[list, set[str]]:
        """Take new event records. Every known event gets its job (linking may need a later
        Workload) and attempt again, as replay assigns them once all events are read. Returns the
        records to index (the new ones and those whose job or attempt changed) and the jobs with a
        newly ended attempt. `failures` (a StageFailures) counts a job whose attempts cannot be cut."""
        before = {r.id: (r.job, r.attempt) for r in self.events.values()}
        for r in records:
            self.events.setdefault(r.id, r)
        if self.max_events is not None and len(self.events) > self.max_events:  # oldest first out
            for key in list(self.events)[: len(self.events) - self.max_events]:
                del self.events[key]
        self.attempts = build_attempts(list(self.events.values()), failures=failures)
        self._lookup = attempt_lookup(self.attempts)
        changed = []
        for r in self.events.values():
            if r.job:
                r.attempt = self._lookup(r.job, r.time)
            if before.get(r.id) != (r.job, r.attempt):
                changed.append(r)
        ended = {(job, a.number) for job, attempts in self.attempts.items() for a in attempts if a.end}
        fresh = ended - self.ended
        self.ended |= ended
        return changed, {job for job, _ in fresh}

    def attempt_of(self, job: str | None, time: str | None) -> int:
        return self._lookup(job, time) if self._lookup is not None else 1


class AttemptOf:
    """The attempt lookup handed to the curators: one object, so checkpoints refer to it by name."""

    def __init__(self, book: EventBook):
        self.book = book

    def __call__(self, job: str | None, time: str | None) -> int:
        return self.book.attempt_of(job, time)


# Objects whose records cut attempts (admissions, evictions, finishes) or explain a lost node:
# few, kept in memory. A Pod's records matter only to a job that has attempts.
_KEPT_KINDS = frozenset({"Workload", "Node", *JOB_KINDS})
_decoder = msgspec.json.Decoder(EventRecord)


class EventStream:
    """A batch run's event records, read once, with memory bounded by what attempts need.

    `add` takes each record as it is read: what it says about workloads, pods and jobs goes into
    the linking index, the record itself to a spool on disk; only Workload, job-kind and Node
    records stay in memory. `cut` reads the spool back for the Pod records of the jobs those
    records give attempts to, and cuts the attempts (build_attempts, with the index of every
    record); `stamped` reads it once more and yields every record with its job and attempt, in
    the order read, for the sink. Memory: the index (a few entries a pod, workload and job),
    16 bytes an id (`IdSet`) and the records of the jobs with attempts, never every record.
    """

    def __init__(self):
        self.index = Index(finished=False)
        self.kept: dict[str, Any] = {}  # id -> record, the ones attempts are cut from
        self.attempts: dict[str, list] = {}
        self.count = 0
        self._seen = IdSet()  # across files: each file's decoder drops its own repeats
        self._spool = tempfile.TemporaryFile(prefix="gangscope-events-")
        self._held: list[Any] = []  # records the spool's JSON cannot hold (left in memory)

    def add(self, record: Any) -> bool:
        """Take one record; False for an id read before (the first copy read wins)."""
        if not self._seen.add(record.id):
            return False
        self.count += 1
        self.index.add(record)
        try:
            data = encode(record)
        except Exception:  # a value JSON cannot hold: the sink counts it when it is written
            data = b"\x00" + str(len(self._held)).encode()
            self._held.append(record)
        self._spool.write(data + b"\n")
        if record.object_kind in _KEPT_KINDS:
            self.kept[record.id] = record
        return True

    def _records(self) -> Iterator[Any]:
        self._spool.flush()
        self._spool.seek(0)
        for line in self._spool:
            line = line[:-1]
            yield self._held[int(line[1:])] if line[:1] == b"\x00" else _decoder.decode(line)

    def cut(self, failures=None) -> dict[str, list]:
        """Each job's attempts (`failures`, a StageFailures, counts what cannot be cut)."""
        self.index.finish()
        kept = link_events(self.kept.values(), self.index)
        jobs = set()
        for r in kept:
            try:
                s = classify(r)
            except Exception:  # counted where build_attempts classifies it again
                continue
            if s is not None and s.kind in JOB_SIGNALS and r.job:
                jobs.add(r.job)
        if jobs:
            for r in self._records():
                if r.object_kind == "Pod" and r.id not in self.kept and (r.job or self.index.job_of(r)) in jobs:
                    self.kept[r.id] = r
        self.attempts = build_attempts(list(self.kept.values()), failures=failures, index=self.index)
        return self.attempts

    def stamped(self) -> Iterator[Any]:
        """Every record as read, with its job (linked) and attempt (after `cut`)."""
        lookup = attempt_lookup(self.attempts)
        for r in self._records():
            r = self.kept.get(r.id, r)  # the copy attempts were cut from (correlation may have given it its job)
            if not r.job:
                job = self.index.job_of(r)
                if job:
                    r.job = job
            if r.job:
                r.attempt = lookup(r.job, r.time)
            yield r

    def close(self) -> None:
        self._spool.close()
