"""The gang events known so far and the attempts they cut, built up event batch by event batch.

The consumer service adds events as they arrive and asks which attempt a log line belongs to;
replay adds all of a run's events at once. Both build the attempts through this one book.
"""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.correlate.attempts import build_attempts
from gangscope.pipeline.correlate.stamping import attempt_lookup


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
