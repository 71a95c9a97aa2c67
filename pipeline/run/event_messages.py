"""An events partition's Kafka messages into the event book: the gang events not seen before, the
records they change, the jobs whose attempts they cut anew (to be corrected: late_events.py) and
the jobs whose attempts they end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from gangscope.parsers.records import Record
from gangscope.pipeline.correlate.event_book import EventBook
from gangscope.pipeline.correlate.restamp import attempt_cuts
from gangscope.pipeline.curate.events import events_of_message
from gangscope.pipeline.isolation import StageFailures
from gangscope.pipeline.sources import kafka as ksrc


class EventsPartition:
    """An events partition keeps no curation state: only how far it was read."""

    def __init__(self):
        self.next_offset: int | None = None

    def open_positions(self) -> list[int]:
        return []


@dataclass
class EventsRead:
    """What a batch of event messages did: records to index, jobs cut anew, jobs whose attempt ended."""

    records: list[Record] = field(default_factory=list)
    recut: set[str] = field(default_factory=set)
    ended: set[str] = field(default_factory=set)


def read_event_messages(state: EventsPartition, messages: list, book: EventBook, failures: StageFailures,
                        dead_letter: Callable[[object, ksrc.Undecodable], None]) -> EventsRead:
    """Add the events of `messages` (one poll's of the partition, in offset order) to `book`.

    dead_letter: called with a message that cannot be read and why."""
    fresh = []
    for m in messages:
        state.next_offset = m.offset + 1
        try:
            decoded = events_of_message(m.value)  # curated: decoded and redacted
        except ksrc.Undecodable as bad:
            dead_letter(m, bad)
            continue
        fresh.extend(decoded.records)
    fresh = book.fresh(fresh)
    if not fresh:
        return EventsRead()
    cuts = {job: attempt_cuts(attempts) for job, attempts in book.attempts.items()}
    changed, ended = book.add(fresh, failures=failures)
    recut = {job for job, attempts in book.attempts.items() if attempt_cuts(attempts) != cuts.get(job, ())}
    return EventsRead(records=changed, recut=recut, ended=ended)
