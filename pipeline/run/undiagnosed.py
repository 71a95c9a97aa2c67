"""The attempts the indexed events end whose diagnosis is not in the index, found when the consumer
starts.

An end event (a workload finished or evicted) ends its job's attempt after `--attempt-grace`; that
clock lives in the consumer's memory, while the events partition's offset is committed past the
event. A stop, a crash or a rebalance inside the grace forgot the clock, and no later reader read the
event again: the attempt (a job of events only, whose containers no checkpoint holds) was never
diagnosed (tests/test_consume_order.py: 1 diagnosis of 8 missing in about 1 run of 4 under load).
The events read at start (indexed_events.py) say which attempts ended; those without a diagnosis
are ended again.
"""

from __future__ import annotations

from typing import Iterable

from opensearchpy.helpers import scan

from gangscope.pipeline.sinks import indices

JOBS_PER_SEARCH = 1000


def undiagnosed_jobs(client, prefix: str, ended: Iterable[tuple[str, int]]) -> set[str]:
    """The jobs of `ended` ((job, attempt) pairs) with an attempt no diagnosis document names."""
    ended = set(ended)
    jobs = sorted({job for job, _ in ended})
    if not jobs:
        return set()
    alias = indices.alias_name("diagnosis", prefix)
    client.indices.refresh(index=alias, ignore_unavailable=True, allow_no_indices=True)
    diagnosed: set[tuple[str, int]] = set()
    for start in range(0, len(jobs), JOBS_PER_SEARCH):
        query = {"query": {"terms": {"job": jobs[start:start + JOBS_PER_SEARCH]}}, "_source": ["job", "attempt"]}
        for hit in scan(client, index=alias, query=query, size=5000, ignore_unavailable=True, allow_no_indices=True):
            source = hit.get("_source") or {}
            diagnosed.add((source.get("job"), source.get("attempt")))
    return {job for job, attempt in ended if (job, attempt) not in diagnosed}
