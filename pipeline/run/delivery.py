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

Once acknowledged, the bulk's checkpoints are saved on the same thread too (`save_after`), before the
loop takes it in: saved by the loop, each commit held it for a bulk request to OpenSearch while
OpenSearch indexed the next bulk (python -m bench.kafka_consume --only throughput with a probe, at
330aa36, load 4-9: 7-14 commits, 0.27-0.77 s of the loop's wall against 0.01-0.03 s of CPU). A
checkpoint is of an offset whose records the bulk carried, so it is saved only once OpenSearch
acknowledged all of them; the offsets are still committed by the loop (the consumer is not shared).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable


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
    # The marks whose checkpoints the bulk thread saved once the bulk was acknowledged (`save_after`):
    # tp -> offset saved; None: not saved there (the loop saves them, if any). `save_error`: why not.
    saved: dict[Any, int] | None = None
    save_error: BaseException | None = None
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

    def save_after(self, bulk: Bulk, save: Callable[[dict], dict]) -> None:
        """Once the bulk in flight is acknowledged, `save(bulk.marks)` on its thread (the marks taken
        after `start`); what it returns (tp -> offset saved) becomes `bulk.saved`, what it raises
        `bulk.save_error`. Nothing is saved for a bulk that failed. `done` waits for it too."""
        assert self._bulk is bulk and self._future is not None, "the bulk in flight"
        self._future = self._pool.submit(self._save, bulk, save)  # one worker: after the flush

    @staticmethod
    def _save(bulk: Bulk, save: Callable[[dict], dict]) -> Bulk:
        if bulk.error is None and bulk.marks:
            try:
                bulk.saved = save(bulk.marks)
            except BaseException as exc:  # handed back to the loop, which commits nothing of the bulk
                bulk.save_error = exc
        return bulk

    def busy(self) -> bool:
        return self._future is not None

    def records(self) -> int:
        """How many records are in flight (0 when none is)."""
        bulk = self._bulk
        return 0 if bulk is None else bulk.count()

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
