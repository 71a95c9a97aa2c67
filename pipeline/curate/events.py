"""Curation of gang events: Kubernetes Event, Kueue Workload, Pod and job-kind objects (Job, PyTorchJob, JobSet,
TrainJob, ...: their status conditions) in, redacted event records out.

The one way events enter the pipeline, from a file (replay's `--events`) and from Kafka (the
consumer, replay's `--from-kafka`): the decoder of parsers/events.py, then the redaction
step, so that an event reads the same whichever way it came, and no path skips the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from gangscope.parsers.events import Decoded, Skip, decode_event_documents, decode_event_stream, decode_object
from gangscope.parsers.records import EventRecord
from gangscope.parsers.redact import redact_record
from gangscope.pipeline.sources import kafka as ksrc

# Skips that are normal traffic (a repeat of an event already read, a watch bookmark), not broken input.
BENIGN_SKIPS = frozenset(("bookmark", "duplicate"))


def curated(items: Iterable[Decoded]) -> Iterator[Decoded]:
    """The decoder's items with every event record redacted (in place); skips pass as they are."""
    for item in items:
        yield redact_record(item) if isinstance(item, EventRecord) else item


def events_of_lines(lines: Iterable[str]) -> Iterator[Decoded]:
    """Event records (redacted) and skips of one event file, read as one stream: NDJSON, a
    watch stream or a pretty-printed `kubectl get -o json` (parsers/events.py)."""
    return curated(decode_event_stream(lines))


def every_event_of_lines(lines: Iterable[str]) -> Iterator[Decoded]:
    """As `events_of_lines`, repeats included: for a caller that finds them on disk (replay,
    pipeline/correlate/event_dedup.py), not with a set of every id in memory."""
    return curated(decode_event_documents(lines))


@dataclass
class MessageEvents:
    """What one Kafka events message gave: its event records, redacted, and its benign skips."""

    records: list[EventRecord] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # benign skips by reason


def events_of_object(obj: Any) -> MessageEvents:
    """The event records (redacted) of one decoded JSON object; ksrc.Undecodable when it
    yields only broken objects (the message then goes to the dead-letter topic)."""
    out = MessageEvents()
    bad: Skip | None = None
    for item in curated(decode_object(obj)):
        if isinstance(item, Skip):
            if item.reason in BENIGN_SKIPS:
                out.skipped[item.reason] = out.skipped.get(item.reason, 0) + 1
            elif bad is None:
                bad = item
            continue
        out.records.append(item)
    if bad is not None and not out.records:
        raise ksrc.Undecodable(bad.reason, bad.detail)
    return out


def events_of_message(value: bytes | None) -> MessageEvents:
    """The event records (redacted) of one Kafka events message; ksrc.Undecodable when it is
    not JSON or yields only broken objects."""
    return events_of_object(ksrc.event_object(value))
