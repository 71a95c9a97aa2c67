"""The state a partition assigned to this consumer starts from: its checkpoint restored when one
is usable (saved at or after the committed offset, in a schema this build reads), else a new one,
read from the committed offset (pipeline/run/checkpoint.py, commit_point.py)."""

from __future__ import annotations

import time
from typing import Callable

import structlog

from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.curate.stats import CurationLimits
from gangscope.pipeline.run import checkpoint
from gangscope.pipeline.run.event_messages import EventsPartition
from gangscope.pipeline.sinks.indices import OpenSearchError

log = structlog.get_logger("gangscope.consume")


def new_partition_state(events: bool, attempt_of, max_containers: int | None) -> LogPartition | EventsPartition:
    """The state of a partition read from its start or its committed offset (no checkpoint);
    `events`: the partition is of an events topic."""
    if events:
        return EventsPartition()
    return LogPartition(attempt_of, limits=CurationLimits(max_containers=max_containers), progress=DerivedProgress())


def restore_partition(store: checkpoint.CheckpointStore, tp, committed: int | None, now: float, *, attempt_of,
                      max_containers: int | None, retry_wait: float,
                      stopping: Callable[[], bool]) -> tuple[LogPartition | None, int | None]:
    """(the restored state, the offset to read from), or (None, `committed`) with no usable
    checkpoint. While OpenSearch cannot be reached the load is tried again every `retry_wait`
    seconds, until `stopping()`."""
    while True:
        try:
            found = store.load(tp.topic, tp.partition)
            break
        except OpenSearchError as exc:
            log.warning("opensearch unreachable while loading a checkpoint", error=str(exc))
            if stopping():
                return None, committed  # never started on: nothing of it is lost
            time.sleep(retry_wait)
    if found is None:
        return None, committed
    offset, data = found
    if committed is not None and offset < committed:
        log.warning("checkpoint older than the committed offset: not used", topic=tp.topic,
                    partition=tp.partition, checkpoint=offset, committed=committed)
        return None, committed
    try:
        state = checkpoint.loads(data, attempt_of, progress=DerivedProgress(),
                                 limits=CurationLimits(max_containers=max_containers))
    except checkpoint.SnapshotError as exc:  # another schema, or no snapshot: fall back to the committed offset
        log.warning(f"checkpoint {exc}: not used", topic=tp.topic, partition=tp.partition)
        return None, committed
    log.info("checkpoint restored", topic=tp.topic, partition=tp.partition, offset=offset, committed=committed)
    return state.restored(now), offset
