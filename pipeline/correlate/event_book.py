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

from gangscope.parsers.records import EventRecord, encode
from gangscope.parsers.events import is_primary_copy
from gangscope.pipeline.correlate.attempts import JOB_SIGNALS, build_attempts
from gangscope.pipeline.correlate.event_dedup import RepeatedEvents, is_dropped
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

    `add` takes each copy of a record as it is read (repeats too), and spools it on disk; which
    copies are repeats is decided on disk too (correlate/event_dedup.RepeatedEvents), by `settle`
    once all are read: the first copy read wins. `settle` then reads the spool back once: what
    each record says about workloads, pods and jobs goes into the linking index, and Workload,
    job-kind and Node records stay in memory. `cut` reads the spool back for the Pod records of
    the jobs those records give attempts to, and cuts the attempts (build_attempts, with the
    index of every record); `stamped` reads it once more and yields every record with its job
    and attempt, in the order read, for the sink. Memory: the index (a few entries a pod,
    workload and job), 1 bit a copy read, and the records of the jobs with attempts, never every
    record or id.
    """

    def __init__(self):
        self.index = Index(finished=False)
        self.kept: dict[str, Any] = {}  # id -> record, the ones attempts are cut from
        self.attempts: dict[str, list] = {}
        self.count = 0  # records, each id once (after `settle`)
        self.duplicates = 0  # primary copies repeated within a file (after `settle`)
        self._repeats = RepeatedEvents()
        self._dropped: bytearray | None = None  # by position, after `settle`
        self._spool = tempfile.TemporaryFile(prefix="gangscope-events-")
        self._held: dict[int, Any] = {}  # position -> a record the spool's JSON cannot hold
        self._kept_copies: dict[int, Any] = {}  # position -> a copy of a kept kind, until `settle`

    def add(self, record: Any, file: int = 0) -> None:
        """Take one copy of a record, read from the `file`-th file (a repeat is dropped at `settle`)."""
        position = self._repeats.note(record.id, file, is_primary_copy(record))
        try:
            data = encode(record)
        except Exception:  # a value JSON cannot hold: the sink counts it when it is written
            data = b"\x00"
            self._held[position] = record
        self._spool.write(data + b"\n")
        if record.object_kind in _KEPT_KINDS:
            self._kept_copies[position] = record

    def settle(self) -> int:
        """After the last `add`: drop the repeats, index the records; the number of duplicates."""
        self._dropped, self.duplicates = self._repeats.settle()
        copies = self._kept_copies
        index = self.index
        for position, r in self._positioned():
            original = copies.pop(position, None)
            if original is not None:
                r = original
                self.kept[r.id] = r
            self.count += 1
            index.add(r)
        self._kept_copies = {}
        return self.duplicates

    def _positioned(self) -> Iterator[tuple[int, Any]]:
        """(position, record) of every record kept, in the order read."""
        dropped = self._dropped
        self._spool.flush()
        self._spool.seek(0)
        for position, line in enumerate(self._spool):
            if dropped is not None and is_dropped(dropped, position):
                continue
            line = line[:-1]
            yield position, self._held[position] if line[:1] == b"\x00" else _decoder.decode(line)

    def _records(self) -> Iterator[Any]:
        for _position, r in self._positioned():
            yield r

    def cut(self, failures=None) -> dict[str, list]:
        """Each job's attempts (`failures`, a StageFailures, counts what cannot be cut)."""
        if self._dropped is None:
            self.settle()
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
