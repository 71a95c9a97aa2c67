"""One bulk request in flight on a thread of its own: the service goes on reading and curating while
OpenSearch indexes what it handed over.

The loop stood still for every bulk request (a quarter of its time at 10,000 lines/s on a loaded
machine, python -m bench.honest). Now it hands the records it gathered to `BulkInFlight` and goes on;
the next bulk gathers meanwhile. What a bulk carries decides what may be committed once OpenSearch
acknowledged it: each partition's offset at the hand-over and, when a commit was due, its checkpoint
taken then (`CommitMark`). Nothing is committed for a bulk that failed: the service's synchronous
delivery retries it with backoff, sending again only the documents OpenSearch did not acknowledge
(`Bulk.unsent`). Sending everything again at every try never ended on a node whose write pool takes two
shard requests at a time: each try got a few indices in, the next one started over (tests/test_faults).

Discipline (the sink is not thread-safe): the service writes to the sink only while nothing is in
flight; the thread only flushes what was written before it started.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CommitMark:
    """A partition's commit point taken at a hand-over: its state object (a partition revoked and
    assigned again since has another one), the offset, the checkpoint to save first (None: saved
    already at this offset, or not checkpointed) and the records still open."""

    state: Any
    offset: int
    data: bytes | None
    open_positions: list[int]


@dataclass
class Bulk:
    """Records handed over together: per partition, the job-level ones, and the commit marks."""

    records: dict[Any, list] = field(default_factory=dict)
    free: list = field(default_factory=list)
    marks: dict[Any, CommitMark] | None = None
    seconds: float = 0.0  # how long OpenSearch took, once done
    error: BaseException | None = None  # why it failed, once done
    # Once it failed: the encoded documents OpenSearch has not acknowledged (the sink's error says
    # which); None: not known, every record is written to the sink again.
    unsent: list | None = None

    def count(self) -> int:
        return sum(len(v) for v in self.records.values()) + len(self.free)

    def all_records(self) -> list:
        return [r for batch in self.records.values() for r in batch] + self.free


class BulkInFlight:
    """At most one bulk being flushed, on one worker thread. `sink`: the OpenSearchSink the records
    were written to (encoded and buffered) before `start`."""

    def __init__(self, sink):
        self.sink = sink
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gangscope-bulk")
        self._bulk: Bulk | None = None
        self._future: Future | None = None

    def _flush(self, bulk: Bulk) -> Bulk:
        t0 = time.monotonic()
        try:
            self.sink.flush()
        except BaseException as exc:  # handed back to the loop, which decides (retry, count)
            bulk.error = exc
        bulk.seconds = time.monotonic() - t0
        return bulk

    def start(self, bulk: Bulk) -> None:
        assert self._future is None, "one bulk in flight at a time"
        self._bulk = bulk
        self._future = self._pool.submit(self._flush, bulk)

    def busy(self) -> bool:
        return self._future is not None

    def holds(self, tp) -> bool:
        """Whether records of partition `tp` are in flight (not acknowledged yet)."""
        bulk = self._bulk
        return bulk is not None and tp in bulk.records

    def done(self, timeout: float | None = 0) -> Bulk | None:
        """The bulk in flight once it is done (acknowledged, or failed: see its `error`), waiting at
        most `timeout` seconds (None: until it is); None while it is still going, or when none is."""
        future = self._future
        if future is None:
            return None
        if timeout is not None and timeout <= 0:
            if not future.done():
                return None
        else:
            try:
                future.result(timeout=timeout)
            except TimeoutError:
                return None
        self._future, bulk, self._bulk = None, self._bulk, None
        return bulk

    def close(self) -> None:
        self._pool.shutdown(wait=False)
