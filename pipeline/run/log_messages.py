"""A log partition's Kafka messages into records: each decoded (dead-lettered when it cannot be
read, counted when the decoder fails on it), then curated in one batch by the partition's state."""

from __future__ import annotations

from typing import Callable

from gangscope.parsers.records import Record
from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.isolation import StageFailures
from gangscope.pipeline.sources import kafka as ksrc


def curate_log_messages(state: LogPartition, messages: list, out: list[Record], scanner, failures: StageFailures,
                        dead_letter: Callable[[object, ksrc.Undecodable], None], now: float) -> set[str]:
    """Curate `messages` (one poll's of the partition, in offset order) into `out`; the partition is
    then read up to the last of them. Returns the jobs whose containers got lines.

    dead_letter: called with a message that cannot be read and why."""
    decode = ksrc.decode_log  # looked up at each batch: tests put a failing decoder in its place
    items = []
    for m in messages:
        try:
            items.append((m.offset, decode(m.value)))
        except ksrc.Undecodable as bad:
            dead_letter(m, bad)
        except Exception as exc:  # a message the decoder fails on: counted, skipped
            failures.add("sources", exc, file=f"{m.topic}/{m.partition}", position=m.offset)
    touched = state.feed_batch(items, out, scanner)
    state.next_offset = messages[-1].offset + 1
    return state.touched(touched, now)
