"""A partition's commit mark taken, and the offsets of acknowledged partitions committed to the
consumer group.

A mark is taken when records are handed to OpenSearch: the partition's next offset, its checkpoint
encoded then (only for a log partition whose state moved since its last checkpoint), its open
records. Once everything before it is acknowledged the checkpoint is saved and the offset that is
then safe (commit_point.py) is committed.
"""

from __future__ import annotations

import structlog

from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.run import checkpoint
from gangscope.pipeline.run.delivery import CommitMark
from gangscope.pipeline.run.rebalance import bounded

log = structlog.get_logger("gangscope.consume")


def take_mark(tp, state, store: checkpoint.CheckpointStore | None, checkpointed_at: int | None) -> CommitMark | None:
    """The partition's commit point as it stands, or None when nothing of it was read.
    checkpointed_at: the offset of its last checkpoint saved (or restored)."""
    if state.next_offset is None:
        return None
    data = None
    if isinstance(state, LogPartition) and store is not None and checkpointed_at != state.next_offset:
        try:
            data = checkpoint.dumps(state)
        except Exception as exc:  # state that does not encode (a bug): no checkpoint, commit stays conservative
            log.warning("checkpoint failed", topic=tp.topic, partition=tp.partition, error=str(exc))
    return CommitMark(state, state.next_offset, data, state.open_positions())


def commit_offsets(consumer, offsets: dict, wait: float, metrics, kafka_ok: bool) -> bool:
    """Commit `offsets` (tp -> OffsetAndMetadata), waiting at most `wait` seconds where the client
    takes a bound; whether Kafka took offsets now (`kafka_ok`: whether it took the last ones). A
    failure is said once until a commit goes through again, and counted. metrics: ServiceMetrics."""
    try:
        consumer.commit(offsets, **bounded(type(consumer).commit, wait))
    except Exception as exc:  # a rebalance under way (the revocation commits instead), or no broker
        metrics.commit_failures.inc()
        metrics.kafka_down.set(1)
        if kafka_ok:
            log.warning("offset commit failed: offsets stay uncommitted until one goes through",
                        error=str(exc) or type(exc).__name__)
        return False
    metrics.commits.inc()
    if not kafka_ok:
        log.info("offsets committed again")
        metrics.kafka_reconnects.inc()
        metrics.kafka_down.set(0)
    return True
