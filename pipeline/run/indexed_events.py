"""The gang events already in OpenSearch, read when the consumer starts: attempt numbers for log
lines whose events this consumer will not read itself (another consumer read them, or they came
before its start)."""

from __future__ import annotations

import time

import structlog
from opensearchpy.helpers import scan

from gangscope.parsers import times
from gangscope.parsers.records import Record, from_dict
from gangscope.pipeline.sinks import indices

log = structlog.get_logger("gangscope.consume")


def indexed_events(client, prefix: str, lookback_hours: float) -> list[Record]:
    """The events indexed with a time in the last `lookback_hours`, in the order they happened (not
    the index's: attempts and their event lists come out as when they were read). None read (said
    in the log) is not fatal: attempts then come from the events read from now on."""
    since = times.from_seconds(int(time.time() - lookback_hours * 3600))
    query = {"query": {"range": {"time": {"gte": since}}}}
    try:
        hits = scan(client, index=indices.alias_name("event", prefix), query=query,
                    size=5000, ignore_unavailable=True, allow_no_indices=True)
        records = [from_dict(h["_source"]) for h in hits]
    except Exception as exc:
        log.warning("indexed events not read", error=str(exc))
        return []
    records.sort(key=lambda r: (r.time or "", r.id))
    return records
