"""The cycle collector's settings for the long-running consumer (`gangscope consume`).

CPython's defaults are made for small programs: a young collection every 700 new container
objects, and a full collection, which scans every tracked object, once the old generation grew by
a quarter. The consumer holds ~80k objects from its imports and start-up that never die (modules,
compiled patterns, parser tables), and each poll batch holds ~4 tracked objects per message (the
message, its envelope, their tuples) for the length of one batch: at 700, a batch's objects went
through several young collections, were promoted, and each full collection scanned the start-up
heap again. On the bench's 300k lines (`python -m bench.honest --consume-only`, gc.callbacks) that
was 2.0-2.2 s of the consumer's 10-13 s of CPU, the full collections 1.4-1.6 s of it; with the
settings below, 0.2-0.3 s.

`settle`, once the service has started: the start-up heap is frozen (gc.freeze: left out of every
later collection; none of it would be freed anyway), and a young collection waits for more new
objects than a poll batch holds, so that a batch's objects are freed by reference counting before
a collection sees them. Nothing gangscope writes depends on when the collector runs (no
finalizers, no weak references).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

# Tracked objects a poll batch holds per message until the batch is curated (measured: 2 after
# the poll, 4 once decoded), with room for what curation makes on the way.
OBJECTS_PER_MESSAGE = 5
# The least young-generation threshold: well above the default 700.
MIN_YOUNG = 50_000


def young_threshold(max_poll_records: int) -> int:
    """New tracked objects between young collections, for poll batches of `max_poll_records`."""
    return max(MIN_YOUNG, OBJECTS_PER_MESSAGE * max(1, max_poll_records))


def settle(max_poll_records: int) -> None:
    """Freeze what start-up made and raise the young threshold (see the module's docstring). The
    older generations' thresholds stay CPython's."""
    gc.collect()  # start-up's garbage freed rather than frozen
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold(max_poll_records), middle, old)


@contextlib.contextmanager
def batch_run(young: int = MIN_YOUNG) -> Iterator[None]:
    """For one batch run (`gangscope replay`): a young collection waits for `young` new tracked
    objects instead of 700, and the thresholds are CPython's again after. A replay makes a few
    short-lived objects per line (tuples, lists, dicts) that reference counting frees: on the
    realistic 300k corpus the defaults ran 285 young, 26 middle and 2 full collections, 0.13 s of
    CPU; with 50,000, 2 young ones, 0.05 s (gc.callbacks, /tmp/work/h19j/gcrep.py). No freeze: a
    library call leaves the process's heap as it found it."""
    before = gc.get_threshold()
    gc.set_threshold(max(young, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
